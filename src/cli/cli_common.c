#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/exit_status.h"
#include "cli/cli.h"

extern char **environ;

void sb_cli_print_error(const struct sb_error *err)
{
	fprintf(stderr, "sagebox: %s\n", err->msg[0] ? err->msg : "unknown error");
	if (err->hint[0])
		fprintf(stderr, "sagebox: hint: %s\n", err->hint);
}

void sb_cli_print_json(json_t *o)
{
	char *s = json_dumps(o, JSON_INDENT(2));
	if (s)
		puts(s);
	free(s);
	json_decref(o);
}

/* "--key=value" or "--key value": the flag name and its value. */
static int split_flag(int argc, char **argv, int *i, char *flag, size_t fsize, const char **value)
{
	const char *a = argv[*i];
	const char *eq = strchr(a, '=');
	if (eq) {
		size_t flen = (size_t)(eq - a) < fsize ? (size_t)(eq - a) : fsize - 1;
		memcpy(flag, a, flen);
		flag[flen] = '\0';
		*value = eq + 1;
		return 0;
	}
	snprintf(flag, fsize, "%s", a);
	if (*i + 1 >= argc)
		return -1;
	*value = argv[++*i];
	return 0;
}

static int load_settings(int argc, char **argv, struct sb_config *cfg, char **rest, int *nrest)
{
	struct sb_error err = {0};
	const char *config_path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			config_path = argv[i + 1];
		else if (!strncmp(argv[i], "--config=", 9))
			config_path = argv[i] + 9;
	}
	if (sb_config_load(cfg, config_path, environ, &err)) {
		sb_cli_print_error(&err);
		return -1;
	}
	*nrest = 0;
	rest[(*nrest)++] = argv[0];
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			break;
		char flag[128];
		size_t flen = strcspn(a, "=");
		if (flen >= sizeof flag)
			flen = sizeof flag - 1;
		memcpy(flag, a, flen);
		flag[flen] = '\0';
		if (!strcmp(flag, "--config")) {
			if (!strchr(a, '='))
				i++;
			continue;
		}
		const char *key = sb_config_key_for_flag(flag);
		if (!key) {
			rest[(*nrest)++] = argv[i];
			continue;
		}
		const char *value;
		if (sb_config_is_switch(key) && !strchr(a, '='))
			value = "true";
		else if (split_flag(argc, argv, &i, flag, sizeof flag, &value)) {
			fprintf(stderr, "sagebox: %s needs a value\n", flag);
			return -1;
		}
		if (sb_config_set(cfg, key, value, flag, &err)) {
			sb_cli_print_error(&err);
			return -1;
		}
	}
	for (; i < argc; i++)
		rest[(*nrest)++] = argv[i];
	return 0;
}

char **sb_cli_settings(int argc, char **argv, struct sb_config *cfg, int *nrest)
{
	char **rest = calloc((size_t)argc + 1, sizeof *rest);
	if (!rest) {
		fprintf(stderr, "sagebox: out of memory\n");
		return NULL;
	}
	if (load_settings(argc, argv, cfg, rest, nrest)) {
		free(rest);
		return NULL;
	}
	return rest;
}

void sb_cli_stop_signals(void (*fn)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static void stop_under_way(int sig)
{
	(void)sig;
}

void sb_cli_stopping_signals(void)
{
	/* A unit's stop (a reboot, a logout, `systemctl stop`) sends SIGTERM
	 * to every process of it at once and may send it again: it must not
	 * cut short the stop it asked for, which saves the sessions' state
	 * before it ends the sandboxes. A handler, not SIG_IGN: what is exec'd
	 * meanwhile starts with the default. SIGINT (a person) still stops at
	 * once. */
	sb_cli_stop_signals(stop_under_way);
	signal(SIGINT, SIG_DFL);
}
