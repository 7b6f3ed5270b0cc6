/* sagebox status and sagebox self-test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/exit_status.h"
#include "cli/cli.h"
#include "runner/runner.h"
#include "tools/report_text.h"
#include "tools/self_test.h"

static int parse_common(int argc, char **argv, const char *name, struct sb_config *cfg, bool *json)
{
	int nrest = 0;
	char **rest = sb_cli_settings(argc, argv, cfg, &nrest);
	if (!rest)
		return SB_EXIT_SANDBOX;
	*json = false;
	for (int i = 1; i < nrest; i++) {
		if (!strcmp(rest[i], "--json")) {
			*json = true;
		} else if (!strcmp(rest[i], "--help") || !strcmp(rest[i], "-h")) {
			printf("usage: sagebox %s [--json] [SETTINGS]\n", name);
			free(rest);
			return 0;
		} else {
			fprintf(stderr, "sagebox: %s: unknown option '%s' (see 'sagebox --help-settings')\n", name,
				rest[i]);
			free(rest);
			return SB_EXIT_USAGE;
		}
	}
	free(rest);
	return -1;
}

/* --json: the report as it is, for machines; else the text for people. */
static void emit(json_t *o, bool json, char *(*text)(const json_t *, enum sb_report_form))
{
	char *s = json ? json_dumps(o, JSON_INDENT(2)) : text(o, SB_REPORT_FULL);
	if (s)
		puts(s);
	free(s);
}

/* Shared by status and self-test: settings, a runner, one JSON report. */
static int report(int argc, char **argv, const char *name, json_t *(*make)(struct sb_runner *),
		  char *(*text)(const json_t *, enum sb_report_form))
{
	struct sb_config cfg;
	bool json;
	int rc = parse_common(argc, argv, name, &cfg, &json);
	if (rc >= 0)
		return rc;
	struct sb_error err = {0};
	struct sb_runner *r = sb_runner_new(&cfg, &err);
	if (!r) {
		sb_cli_print_error(&err);
		return SB_EXIT_SANDBOX;
	}
	json_t *o = make(r);
	emit(o, json, text);
	int ok = json_is_true(json_object_get(o, "ok"));
	json_decref(o);
	sb_runner_free(r);
	return ok ? 0 : 1;
}

int sb_cli_status(int argc, char **argv)
{
	return report(argc, argv, "status", sb_runner_status, sb_status_text);
}

int sb_cli_self_test(int argc, char **argv)
{
	return report(argc, argv, "self-test", sb_self_test, sb_self_test_text);
}
