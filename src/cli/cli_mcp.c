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
#include "tools/tool.h"
#include "transport/stdio.h"
#include "util/buf.h"
#include "util/fd.h"

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

/* Print text wrapped at 78 columns. */
static void wrapped(FILE *out, const char *text)
{
	size_t col = 0;
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, " ");
		if (col && col + 1 + n > 78) {
			fputc('\n', out);
			col = 0;
		} else if (col) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, n, out);
		col += n;
		p += n;
		p += strspn(p, " ");
	}
	fputc('\n', out);
}

static void usage(FILE *out)
{
	SB_AUTO_BUF about = {0};
	char *tools = sb_tool_names();
	sb_buf_printf(&about,
		      "Serve the Model Context Protocol over stdio (newline-delimited JSON-RPC on "
		      "stdin/stdout; logs go to stderr). Tools: %s. Every setting can be given as a flag "
		      "(--timeout 60, --memory 2g, --backend native, --audit-log FILE, ...) or as a "
		      "SAGEBOX_* variable in the client's config; see sagebox --help-settings.",
		      tools ? tools : "?");
	free(tools);
	fputs("usage: sagebox mcp [SETTING FLAGS]\n\n", out);
	wrapped(out, about.data ? about.data : "");
	fputs("\n"
	      "LM Studio (~/.lmstudio/mcp.json) or Claude Desktop:\n"
	      "  {\"mcpServers\": {\"sagebox\": {\"command\": \"sagebox\", \"args\": [\"mcp\"]}}}\n",
	      out);
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
	SB_AUTO_FD null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (*in < 0 || *out < 0 || null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		fprintf(stderr, "sagebox mcp: cannot set up stdin/stdout: %s\n", strerror(errno));
		return -1;
	}
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

	SB_AUTO_FD in = -1;
	SB_AUTO_FD out = -1;
	if (take_stdio(&in, &out) < 0)
		return SB_EXIT_FAILURE;
	signal(SIGPIPE, SIG_IGN);

	struct sb_runner *runner = sb_runner_new(&cfg, &err);
	if (runner)
		sb_runner_prestart(runner, SB_LANG_SAGE);
	else
		fprintf(stderr, "sagebox mcp: the sandbox is not usable, tools will say why: %s\n", err.msg);

	struct sb_stdio *io = sb_stdio_new(in, out, SB_STDIO_MAX_MESSAGE);
	struct sb_mcp_server *srv = io ? sb_mcp_server_new(&cfg, runner, &err, audit.fd >= 0 ? &audit : NULL) : NULL;
	int rc = SB_EXIT_FAILURE;
	if (srv) {
		stop_fd = sb_stdio_stop_fd(io);
		handle_signals(on_signal);
		fprintf(stderr, "sagebox mcp: serving on stdio (backend %s)\n", cfg.backend);
		/* Returns once stdin closed (or a signal) and every call ended. */
		if (sb_stdio_serve(io, srv) < 0)
			fprintf(stderr, "sagebox mcp: serving stdio failed: %s\n", strerror(errno));
		else
			rc = SB_EXIT_OK;
		handle_signals(SIG_DFL);
		stop_fd = -1;
	} else {
		fprintf(stderr, "sagebox mcp: out of memory\n");
	}
	sb_mcp_server_free(srv);
	sb_runner_free(runner);
	sb_stdio_free(io);
	sb_audit_close(&audit);
	return rc;
}
