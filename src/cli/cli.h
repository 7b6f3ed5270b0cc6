/* Command-line entry points. Only this layer decides to exit or print. */
#ifndef SAGEBOX_CLI_H
#define SAGEBOX_CLI_H

#include <jansson.h>
#include <stdbool.h>

#include "config/config.h"

/* Each subcommand gets argv after the subcommand name (argv[0] is the
 * subcommand) and returns the process exit status. */
int sb_cli_run(int argc, char **argv);
int sb_cli_status(int argc, char **argv);
int sb_cli_self_test(int argc, char **argv);
int sb_cli_mcp(int argc, char **argv);
/* sagebox mcp with the service setting: relay stdio to the user-level
 * service (starting it when needed). The exit status, or -1 when the
 * service cannot be used (why is on stderr): then serve in-process. argv
 * as sb_cli_mcp's. */
int sb_cli_service_front(int argc, char **argv, const struct sb_config *cfg);
/* sagebox image build [--tag TAG]: a Sage image from Debian packages. */
int sb_cli_image(int argc, char **argv);
/* sagebox proxy --listen PATH: the network proxy in the foreground. */
int sb_cli_proxy(int argc, char **argv);
/* sagebox packages add|list|remove: the user's package presets. */
int sb_cli_packages(int argc, char **argv);
/* sagebox workspaces list|show|rm|export|import: the named workspaces on disk. */
int sb_cli_workspaces(int argc, char **argv);
/* sagebox policy [--json]: the syscall policy table. */
int sb_cli_policy(int argc, char **argv);

/* Load the configuration (defaults, file, SAGEBOX_*), then apply setting
 * flags found in argv (--timeout 5, --timeout=5, --memory 1g, --backend ...,
 * --config FILE; every setting of config.c has a flag). Flags this function
 * does not know are left for the caller: it returns them, argv[0] first, as
 * a NULL-terminated array of its own (*nrest of them; free() it, not the
 * strings, which are argv's). On a bad value prints the error with its
 * origin and allowed range to stderr and returns NULL (out of memory too). */
char **sb_cli_settings(int argc, char **argv, struct sb_config *cfg, int *nrest);

/* fn (or SIG_DFL) for the signals that ask a server to stop: TERM, INT,
 * HUP. */
void sb_cli_stop_signals(void (*fn)(int));

/* Once a server is stopping: TERM and HUP no longer end it (its sessions'
 * state is being saved), INT does. */
void sb_cli_stopping_signals(void);

/* Print o as indented JSON on stdout, then drop the reference. */
void sb_cli_print_json(json_t *o);

/* Print an error (and its hint) as "sagebox: ...". */
void sb_cli_print_error(const struct sb_error *err);

#endif
