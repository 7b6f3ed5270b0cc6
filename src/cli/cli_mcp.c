/* sagebox mcp: serve the Model Context Protocol on stdin/stdout. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/exit_status.h"
#include "cli/cli.h"
#include "mcp/audit.h"
#include "mcp/mcp.h"
#include "runner/runner.h"
#include "transport/stdio.h"

/* Written once before the handlers are installed, read by them only. */
static volatile sig_atomic_t stop_fd = -1;

static void on_signal(int sig)
{
	int saved = errno;
	char b = 's';
	if (stop_fd >= 0) {
		ssize_t ignored = write(stop_fd, &b, 1);
		(void)ignored;
	}
	errno = saved;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sagebox mcp [SETTING FLAGS]\n"
		"\n"
		"Serve the Model Context Protocol over stdio (newline-delimited JSON-RPC on\n"
		"stdin/stdout; logs go to stderr). Tools: run_sagemath, run_python, run_shell,\n"
		"sandbox_status, sandbox_self_test. Every setting can be given as a flag\n"
		"(--timeout 60, --memory 2g, --backend native, --audit-log FILE, ...) or as a\n"
		"SAGEBOX_* variable in the client's config; see sagebox --help-settings.\n"
		"\n"
		"LM Studio (~/.lmstudio/mcp.json) or Claude Desktop:\n"
		"  {\"mcpServers\": {\"sagebox\": {\"command\": \"sagebox\", \"args\": [\"mcp\"]}}}\n");
}

static void handle_signals(void (*fn)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* The protocol owns stdin and stdout: move them to private close-on-exec
 * fds, and point fds 0 and 1 at /dev/null and stderr. No child can read
 * the client's messages, and a stray printf anywhere lands on stderr
 * instead of corrupting the protocol stream. */
static int take_stdio(int *in, int *out)
{
	*in = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	*out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (*in < 0 || *out < 0 || null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		fprintf(stderr, "sagebox mcp: cannot set up stdin/stdout: %s\n", strerror(errno));
		return -1;
	}
	close(null);
	return 0;
}

int sb_cli_mcp(int argc, char **argv)
{
	struct sb_config cfg;
	char **rest = calloc((size_t)argc + 1, sizeof *rest);
	int nrest = 0;
	if (!rest || sb_cli_load_settings(argc, argv, &cfg, rest, &nrest) < 0) {
		free(rest);
		return SB_EXIT_USAGE;
	}
	for (int i = 1; i < nrest; i++) {
		bool help = !strcmp(rest[i], "--help") || !strcmp(rest[i], "-h");
		if (!help)
			fprintf(stderr, "sagebox mcp: unknown option '%s'\n\n", rest[i]);
		usage(help ? stdout : stderr);
		free(rest);
		return help ? SB_EXIT_OK : SB_EXIT_USAGE;
	}
	free(rest);

	struct sb_audit audit = {.fd = -1};
	struct sb_error err = {0};
	if (cfg.audit_log[0] && sb_audit_open(&audit, cfg.audit_log, &err) < 0) {
		/* The user asked to see what the model runs: do not run unseen. */
		sb_cli_print_error(&err);
		return SB_EXIT_FAILURE;
	}

	int in, out;
	if (take_stdio(&in, &out) < 0)
		return SB_EXIT_FAILURE;
	signal(SIGPIPE, SIG_IGN);

	struct sb_runner *runner = sb_runner_new(&cfg, &err);
	if (runner)
		sb_runner_prestart(runner, SB_LANG_SAGE);
	else
		fprintf(stderr, "sagebox mcp: the sandbox is not usable, tools will say why: %s\n", err.msg);

	struct sb_stdio *io = sb_stdio_new(in, out, SB_STDIO_MAX_MESSAGE);
	struct sb_mcp_sink sink = io ? sb_stdio_sink(io) : (struct sb_mcp_sink){0};
	struct sb_mcp *srv = io ? sb_mcp_new(&cfg, runner, &err, audit.fd >= 0 ? &audit : NULL, &sink) : NULL;
	int rc = 1;
	if (srv) {
		stop_fd = sb_stdio_stop_fd(io);
		handle_signals(on_signal);
		fprintf(stderr, "sagebox mcp: serving on stdio (backend %s)\n", cfg.backend);
		rc = sb_stdio_serve(io, srv) < 0 ? 1 : 0;
		if (rc)
			fprintf(stderr, "sagebox mcp: reading stdin failed: %s\n", strerror(errno));
		/* stdin closed (or a signal): kill running jobs, join every thread. */
		sb_mcp_shutdown(srv);
		handle_signals(SIG_DFL);
		stop_fd = -1;
	} else {
		fprintf(stderr, "sagebox mcp: out of memory\n");
	}
	sb_mcp_free(srv);
	sb_runner_free(runner);
	sb_stdio_free(io);
	sb_audit_close(&audit);
	close(in);
	close(out);
	return rc;
}
