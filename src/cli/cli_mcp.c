/* sagebox mcp: serve the Model Context Protocol on stdin/stdout, or with
 * --http over Streamable HTTP to many clients. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/exit_status.h"
#include "cli/cli.h"
#include "cli/cli_http.h"
#include "mcp/audit.h"
#include "mcp/mcp.h"
#include "packages/packages.h"
#include "runner/runner.h"
#include "tools/tool.h"
#include "transport/http.h"
#include "transport/service.h"
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

/* The HTTP flags, as one table. */
struct http_flag {
	const char *name;
	bool value;             /* takes a value */
	const char *usage, *help;
	int (*set)(struct sb_http_options *o, const char *v, struct sb_error *err);
};

static int set_listen(struct sb_http_options *o, const char *v, struct sb_error *err)
{
	return sb_http_parse_listen(v, o, err);
}
static int set_remote(struct sb_http_options *o, const char *v, struct sb_error *err)
{
	o->allow_remote = true;
	return 0;
}
static int set_cert(struct sb_http_options *o, const char *v, struct sb_error *err)
{
	o->tls_cert = v;
	return 0;
}
static int set_key(struct sb_http_options *o, const char *v, struct sb_error *err)
{
	o->tls_key = v;
	return 0;
}
static int set_tokens(struct sb_http_options *o, const char *v, struct sb_error *err)
{
	o->token_file = v;
	return 0;
}
static int set_no_auth(struct sb_http_options *o, const char *v, struct sb_error *err)
{
	o->no_auth = true;
	return 0;
}
static int set_metrics(struct sb_http_options *o, const char *v, struct sb_error *err)
{
	o->metrics_listen = true;
	return sb_http_parse_bind("--metrics-listen", v, &o->metrics_bind, err);
}
static int set_origins(struct sb_http_options *o, const char *v, struct sb_error *err)
{
	o->bind.origins = v;
	return 0;
}

static int number(const char *flag, const char *v, unsigned long long min, unsigned long long max,
		  unsigned long long *out, struct sb_error *err)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (!*v || *end || errno || n < min || n > max || *v == '-')
		return sb_fail(err, "%s %s: must be a whole number from %llu to %llu", flag, v, min, max);
	*out = n;
	return 0;
}
#define NUMBER_FLAG(fn, flag, min, max, field)                                        \
	static int fn(struct sb_http_options *o, const char *v, struct sb_error *err) \
	{                                                                               \
		unsigned long long n;                                                   \
		if (number(flag, v, min, max, &n, err) < 0)                             \
			return -1;                                                      \
		field = (__typeof__(field))n;                                           \
		return 0;                                                               \
	}
NUMBER_FLAG(set_max_body, "--http-max-body", 1024, 64ull * 1024 * 1024, o->limits.max_body)
NUMBER_FLAG(set_inflight, "--http-max-inflight", 1, 10000, o->limits.max_inflight_client)
NUMBER_FLAG(set_inflight_total, "--http-max-inflight-total", 1, 100000, o->limits.max_inflight_total)
NUMBER_FLAG(set_connections, "--http-max-connections", 4, 4096, o->max_connections)
NUMBER_FLAG(set_req_timeout, "--http-request-timeout", 1, 3600, o->request_timeout_s)

static const struct http_flag http_flags[] = {
	{"--http", true, "--http [ADDR:]PORT", "serve HTTP on ADDR (default 127.0.0.1) and PORT (0: any free port)",
	 set_listen},
	{"--allow-remote", false, "--allow-remote", "allow an address other than loopback (use TLS or a proxy)",
	 set_remote},
	{"--tls-cert", true, "--tls-cert FILE", "serve HTTPS with this PEM certificate (with --tls-key)", set_cert},
	{"--tls-key", true, "--tls-key FILE", "the certificate's PEM private key", set_key},
	{"--token-file", true, "--token-file FILE",
	 "tokens, one per line, name:token or token; each is one client (default: one token made in "
	 "$XDG_STATE_HOME/sagebox/token)",
	 set_tokens},
	{"--insecure-no-auth", false, "--insecure-no-auth", "no token (loopback only; for tests and experiments)",
	 set_no_auth},
	{"--allowed-origin", true, "--allowed-origin LIST",
	 "comma-separated origins or host names browsers and proxies may use", set_origins},
	{"--http-max-body", true, "--http-max-body BYTES", "largest request body (default 8 MiB; 413 beyond)",
	 set_max_body},
	{"--http-max-inflight", true, "--http-max-inflight N", "requests at once per client (default 32; 429 beyond)",
	 set_inflight},
	{"--http-max-inflight-total", true, "--http-max-inflight-total N", "requests at once in all (default 128)",
	 set_inflight_total},
	{"--http-max-connections", true, "--http-max-connections N", "open connections at once (default 256)",
	 set_connections},
	{"--http-request-timeout", true, "--http-request-timeout S",
	 "seconds a client has to send a whole request (default 30)", set_req_timeout},
	{"--metrics-listen", true, "--metrics-listen [ADDR:]PORT",
	 "serve GET /metrics and GET /health on this address too, without a token (for Prometheus; "
	 "on /mcp's address /metrics needs a token)",
	 set_metrics},
};

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
	fputs("usage: sagebox mcp [SETTING FLAGS]\n"
	      "       sagebox mcp --http [ADDR:]PORT [HTTP FLAGS] [SETTING FLAGS]\n"
	      "       sagebox mcp --drain [--instance NAME]\n\n", out);
	wrapped(out, about.data ? about.data : "");
	fputs("\n"
	      "LM Studio (~/.lmstudio/mcp.json) or Claude Desktop:\n"
	      "  {\"mcpServers\": {\"sagebox\": {\"command\": \"sagebox\", \"args\": [\"mcp\"]}}}\n"
	      "  with \"args\": [\"mcp\", \"--service\"]: a user-level service keeps a warm Sage worker\n"
	      "  (~360 MiB) across the app's restarts, for --service-idle-seconds (600) after the last\n"
	      "  client; if it cannot be used, sagebox mcp serves in-process as without it.\n"
	      "\n"
	      "Streamable HTTP (many clients; each token is one client; POST to /mcp):\n",
	      out);
	for (size_t i = 0; i < sizeof http_flags / sizeof *http_flags; i++)
		fprintf(out, "  %-28s %s\n", http_flags[i].usage, http_flags[i].help);
	fputs("\n"
	      "Many instances behind a router (docs/DEPLOY.md): every id names the instance setting; GET /health\n"
	      "needs no token; GET /metrics is Prometheus' text format. SIGTERM drains: no new sessions or jobs,\n"
	      "open ones served for at most drain_timeout seconds, then the server stops; SIGINT stops now.\n"
	      "  --drain                      ask the running --http server of this user and instance to drain,\n"
	      "                               and wait until it has stopped\n",
	      out);
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

/* Parse what sb_cli_settings left: the HTTP flags and --help.
 * Returns 1 to go on, 0 after --help, -1 on a bad option. */
static int parse_rest(int nrest, char **rest, struct sb_http_options *o, bool *http, bool *drain)
{
	struct sb_error err = {0};
	for (int i = 1; i < nrest; i++) {
		if (!strcmp(rest[i], "--help") || !strcmp(rest[i], "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(rest[i], "--drain")) {
			*drain = true;
			continue;
		}
		const struct http_flag *f = NULL;
		const char *value = NULL;
		for (size_t j = 0; j < sizeof http_flags / sizeof *http_flags; j++) {
			size_t n = strlen(http_flags[j].name);
			if (!strncmp(rest[i], http_flags[j].name, n) && (!rest[i][n] || rest[i][n] == '=')) {
				f = &http_flags[j];
				value = rest[i][n] == '=' ? rest[i] + n + 1 : NULL;
			}
		}
		if (!f) {
			fprintf(stderr, "sagebox mcp: unknown option '%s'\n\n", rest[i]);
			usage(stderr);
			return -1;
		}
		if (f->value && !value && i + 1 >= nrest) {
			fprintf(stderr, "sagebox mcp: %s needs a value (%s)\n", f->name, f->usage);
			return -1;
		}
		if (f->value && !value)
			value = rest[++i];
		if (f->set(o, value, &err) < 0) {
			sb_cli_print_error(&err);
			return -1;
		}
		*http = *http || !strcmp(f->name, "--http");
	}
	if (*drain && (*http || nrest > 2)) {
		fprintf(stderr, "sagebox mcp: --drain takes no HTTP flags (only settings such as --instance NAME)\n");
		return -1;
	}
	if (!*http && !*drain && nrest > 1) {
		fprintf(stderr, "sagebox mcp: the HTTP flags need --http [ADDR:]PORT\n");
		return -1;
	}
	return 1;
}

/* Serve the user-level service's socket until idle or a signal. */
static int serve_service(const struct sb_service_opts *base, struct sb_mcp_server *srv, struct sb_runner *runner)
{
	int p[2];
	if (sb_pipe(p) < 0) {
		fprintf(stderr, "sagebox mcp: pipe: %s\n", strerror(errno));
		return SB_EXIT_FAILURE;
	}
	struct sb_service_opts o = *base;
	o.stop_fd = p[0];
	stop_fd = p[1];
	sb_cli_stop_signals(on_signal);
	int rc = sb_service_serve(&o, srv, runner) < 0 ? SB_EXIT_FAILURE : SB_EXIT_OK;
	sb_cli_stopping_signals();
	stop_fd = -1;
	sb_close(&p[0]);
	sb_close(&p[1]);
	return rc;
}

int sb_cli_mcp(int argc, char **argv)
{
	/* Started by a front as the user-level service: take what it handed
	 * over out of the environment at once, so no sandbox ever sees it. */
	static char svc_sock[108], svc_ident[4096];
	const char *env_sock = getenv(SB_SERVICE_SOCKET_ENV), *env_ident = getenv(SB_SERVICE_IDENTITY_ENV);
	if (env_sock && *env_sock) {
		snprintf(svc_sock, sizeof svc_sock, "%s", env_sock);
		snprintf(svc_ident, sizeof svc_ident, "%s", env_ident ? env_ident : "unknown");
	}
	unsetenv(SB_SERVICE_SOCKET_ENV);
	unsetenv(SB_SERVICE_IDENTITY_ENV);
	bool service = svc_sock[0] != '\0';
	struct sb_config cfg;
	int nrest = 0;
	char **rest = sb_cli_settings(argc, argv, &cfg, &nrest);
	if (!rest)
		return SB_EXIT_USAGE;
	struct sb_http_options http_opt;
	sb_http_options_defaults(&http_opt);
	bool http = false, drain = false;
	int go = parse_rest(nrest, rest, &http_opt, &http, &drain);
	free(rest);
	if (go <= 0)
		return go == 0 ? SB_EXIT_OK : SB_EXIT_USAGE;
	if (drain)
		return sb_cli_drain(&cfg);
	struct sb_error opt_err = {0};
	if (http && sb_http_check_options(&http_opt, &opt_err) < 0) {
		sb_cli_print_error(&opt_err);
		return SB_EXIT_USAGE;
	}

	if (cfg.service && !service && http)
		fprintf(stderr, "sagebox mcp: the service setting is for stdio clients; not used with --http\n");
	/* Over HTTP each token is a client of its own: its workspaces are
	 * kept apart by token, and the local user's project folder is not
	 * bound (every token's sessions would share it). */
	cfg.http_clients = http;
	if (http && cfg.project_dir[0])
		fprintf(stderr, "sagebox mcp: project_dir is the local user's folder (stdio and the service): not bound "
				"for HTTP clients\n");
	if (cfg.service && !service && !http) {
		int front = sb_cli_service_front(argc, argv, &cfg);
		if (front >= 0)
			return front;
	}

	struct sb_audit audit = {.fd = -1};
	struct sb_error err = {0};
	if (cfg.audit_log[0] && sb_audit_open(&audit, cfg.audit_log, &err) < 0) {
		/* The user asked to see what the model runs: do not run unseen. */
		sb_cli_print_error(&err);
		return SB_EXIT_FAILURE;
	}

	SB_AUTO_FD in = -1;
	SB_AUTO_FD out = -1;
	if (!http && !service && take_stdio(&in, &out) < 0)
		return SB_EXIT_FAILURE;
	signal(SIGPIPE, SIG_IGN);

	sb_packages_server_start(); /* before the backend looks for it */
	struct sb_runner *runner = sb_runner_new(&cfg, &err);
	if (runner)
		sb_runner_prestart(runner, SB_LANG_SAGE);
	else
		fprintf(stderr, "sagebox mcp: the sandbox is not usable, tools will say why: %s\n", err.msg);

	struct sb_stdio *io = http || service ? NULL : sb_stdio_new(in, out, SB_STDIO_MAX_MESSAGE);
	struct sb_mcp_server *srv = http || service || io ? sb_mcp_server_new(&cfg, runner, &err, audit.fd >= 0 ? &audit : NULL)
					       : NULL;
	int rc = SB_EXIT_FAILURE;
	if (srv && http) {
		snprintf(http_opt.instance, sizeof http_opt.instance, "%s", sb_config_instance(&cfg));
		rc = sb_cli_serve_http(&http_opt, srv, runner, &cfg, &err);
	} else if (srv && service) {
		struct sb_service_opts so = {.socket_path = svc_sock, .identity = svc_ident,
					     .idle_s = cfg.service_idle_s};
		fprintf(stderr, "sagebox mcp: serving as the user-level service (backend %s)\n", cfg.backend);
		rc = serve_service(&so, srv, runner);
	} else if (srv) {
		stop_fd = sb_stdio_stop_fd(io);
		sb_cli_stop_signals(on_signal);
		fprintf(stderr, "sagebox mcp: serving on stdio (backend %s)\n", cfg.backend);
		/* Returns once stdin closed (or a signal) and every call ended. */
		if (sb_stdio_serve(io, srv) < 0)
			fprintf(stderr, "sagebox mcp: serving stdio failed: %s\n", strerror(errno));
		else
			rc = SB_EXIT_OK;
		sb_cli_stopping_signals();
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
