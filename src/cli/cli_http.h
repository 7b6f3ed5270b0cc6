/* sagebox mcp --http's serving loop and drain (cli_http.c), and
 * sagebox mcp --drain. */
#ifndef SAGEBOX_CLI_HTTP_H
#define SAGEBOX_CLI_HTTP_H

#include "cli/cli.h"
#include "mcp/mcp.h"
#include "runner/runner.h"
#include "transport/http.h"

/* How to reach the server, for the person who started it (stderr). */
void sb_cli_http_banner(const char *listen_url, const char *token_path, const struct sb_http_options *o,
			const char *backend, const char *instance);

/* Serve o until SIGINT (now) or SIGTERM / --drain (after draining).
 * runner may be NULL (runner_err: why): /health then says not ready. */
int sb_cli_serve_http(const struct sb_http_options *o, struct sb_mcp_server *srv, struct sb_runner *runner,
		      const struct sb_config *cfg, const struct sb_error *runner_err);

/* sagebox mcp --drain: ask this instance's server to drain, wait for it
 * to stop. */
int sb_cli_drain(const struct sb_config *cfg);

#endif
