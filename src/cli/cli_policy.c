/* sagebox policy: the syscall policy every isolating backend enforces
 * (sandbox/policy.c), for people (what is refused, why, which attack it
 * stops) and, with --json, for tests and tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/exit_status.h"
#include "sandbox/policy.h"

static void print_row(json_t *row)
{
	size_t i;
	json_t *v;
	printf("-");
	json_array_foreach(json_object_get(row, "names"), i, v) printf(" %s", json_string_value(v));
	printf("\n    refused with %s", json_string_value(json_object_get(row, "errno")));
	const char *when = json_string_value(json_object_get(row, "when"));
	if (strcmp(when, "always")) {
		printf(" when argument %lld: %s (", (long long)json_integer_value(json_object_get(row, "arg")), when);
		json_array_foreach(json_object_get(row, "values"), i, v)
			printf("%s0x%llx", i ? ", " : "", (unsigned long long)json_integer_value(v));
		printf(")");
	}
	json_t *only = json_object_get(row, "only_where");
	if (only)
		printf(", only where argument %lld is 0x%llx", (long long)json_integer_value(json_object_get(only, "arg")),
		       (unsigned long long)json_integer_value(json_object_get(only, "equals")));
	printf("\n    what: %s\n    stops: %s\n", json_string_value(json_object_get(row, "why")),
	       json_string_value(json_object_get(row, "stops")));
}

int sb_cli_policy(int argc, char **argv)
{
	bool json = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: sagebox policy [--json]\n\nThe system calls sandboxed code may not make, "
			       "how each is refused and why (native, podman and docker backends).\n");
			return SB_EXIT_OK;
		} else {
			fprintf(stderr, "sagebox: policy: unknown option '%s'\n", argv[i]);
			return SB_EXIT_USAGE;
		}
	}
	json_t *p = sb_policy_json();
	if (json) {
		char *s = json_dumps(p, JSON_INDENT(2));
		if (s)
			puts(s);
		free(s);
	} else {
		printf("System calls refused in the native, podman and docker sandboxes (a seccomp filter;\n"
		       "the host backend has none). Calls through another architecture's ABI: %s.\n\n",
		       json_string_value(json_object_get(p, "foreign_architectures")));
		size_t i;
		json_t *row;
		json_array_foreach(json_object_get(p, "rules"), i, row) print_row(row);
	}
	json_decref(p);
	return SB_EXIT_OK;
}
