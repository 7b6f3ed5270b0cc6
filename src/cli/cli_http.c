/* sagebox mcp --http: serve until a signal, and drain on SIGTERM or
 * `sagebox mcp --drain` (the control socket, transport/control.h): /health
 * says draining at once, no new session or job opens, and what is open
 * (requests in flight, sessions and background jobs) is served until it
 * ends or drain_timeout passes; then everything stops as at SIGINT. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_http.h"
#include "core/exit_status.h"
#include "metrics/metrics.h"
#include "metrics/process.h"
#include "transport/control.h"
#include "util/clock.h"
#include "util/fd.h"

/* A drain ends early once nothing is open and no request came for this
 * long: a router's health check (every second in docs/deploy/haproxy.cfg)
 * has seen "draining" by then and sends nothing new, so no request
 * arrives at a closed port. */
#define QUIET_MS 2500

/* Written once before the handlers are installed, read by them only. */
static volatile sig_atomic_t signal_fd = -1;

/* SIGTERM drains ('t'); SIGINT and SIGHUP stop now ('i'). */
static void on_signal(int sig)
{
	int saved = errno;
	char b = sig == SIGTERM ? 't' : 'i';
	if (signal_fd >= 0) {
		ssize_t ignored = write(signal_fd, &b, 1);
		(void)ignored;
	}
	errno = saved;
}

/* How to reach the server, for the person who started it. The token itself
 * is not printed (this often lands in a shared log). */
void sb_cli_http_banner(const char *listen_url, const char *token_path, const struct sb_http_options *o,
			const char *backend, const char *instance)
{
	const char *hdr = token_path[0] ? ", \"headers\": {\"Authorization\": \"Bearer TOKEN\"}" : "";
	fprintf(stderr, "sagebox mcp: serving MCP over HTTP at %s (backend %s, instance %s)\n", listen_url, backend,
		instance);
	/* 0.0.0.0 and :: mean every address here; no client can connect to
	 * them, so the snippets name this machine instead. */
	char url[512];
	snprintf(url, sizeof url, "%s", listen_url);
	const char *port = strrchr(listen_url, ':');
	char host[256];
	if (o->bind.wildcard && port && gethostname(host, sizeof host) == 0) {
		host[sizeof host - 1] = '\0';
		snprintf(url, sizeof url, "%s://%s%s", o->tls_cert ? "https" : "http", host, port);
		fprintf(stderr, "  (%s is every address of this machine; clients use an address or name of it, e.g. %s)\n",
			o->bind.addr, url);
	}
	if (token_path[0])
		fprintf(stderr, "  token: in %s (TOKEN below; send it as \"Authorization: Bearer TOKEN\")\n", token_path);
	else
		fprintf(stderr, "  no token: anyone on this machine can run code here (--insecure-no-auth)\n");
	fprintf(stderr,
		"  LM Studio (~/.lmstudio/mcp.json):\n"
		"    {\"mcpServers\": {\"sagebox\": {\"url\": \"%s\"%s}}}\n"
		"  Claude Desktop (claude_desktop_config.json), through a local stdio bridge:\n"
		"    {\"mcpServers\": {\"sagebox\": {\"command\": \"npx\", \"args\": [\"mcp-remote\", \"%s\"%s]}}}\n"
		"    or over ssh: {\"command\": \"ssh\", \"args\": [\"HOST\", \"sagebox\", \"mcp\"]}\n"
		"  SDKs: new StreamableHTTPClientTransport(new URL(\"%s\"), {requestInit: {headers: "
		"{Authorization: \"Bearer TOKEN\"}}})\n",
		url, hdr, url, token_path[0] ? ", \"--header\", \"Authorization: Bearer TOKEN\"" : "", url);
	if (!o->bind.loopback && !o->tls_cert)
		fprintf(stderr, "sagebox mcp: warning: listening on %s without TLS: tokens and code cross the network "
			"in clear text; use --tls-cert/--tls-key or a TLS reverse proxy (docs/DEPLOY.md)\n", o->bind.addr);
	if (o->no_auth)
		fprintf(stderr, "sagebox mcp: warning: --insecure-no-auth: every local user and program can run "
			"code through this server\n");
}

struct serving {
	struct sb_http *h;
	struct sb_runner *runner;
	const struct sb_config *cfg;
	uint64_t drain_started, deadline;  /* monotonic ms; 0: not draining */
};

static void open_work(struct serving *s, char *buf, size_t n)
{
	unsigned inflight, sessions;
	uint64_t last;
	sb_http_open_work(s->h, &inflight, &sessions, &last);
	snprintf(buf, n, "%u request(s) in flight, %u MCP session(s), %u session(s) and background job(s) open",
		 inflight, sessions, s->runner ? sb_runner_in_use(s->runner) : 0);
}

/* The control socket's answer to "drain". */
static void status_line(void *ctx, char *buf, size_t n)
{
	struct serving *s = ctx;
	char work[256];
	open_work(s, work, sizeof work);
	snprintf(buf, n, "draining instance %s: %s; they may go on for at most %u s", sb_config_instance(s->cfg),
		 work, s->cfg->drain_timeout_s);
}

static void drain(struct serving *s, struct sb_mcp_server *srv, const char *why)
{
	s->drain_started = sb_now_ms();
	s->deadline = s->drain_started + (uint64_t)s->cfg->drain_timeout_s * 1000;
	sb_http_drain(s->h, why);
	sb_mcp_server_drain(srv);
	sb_metric_set(SB_M_DRAINING, 1, NULL);
	char work[256];
	open_work(s, work, sizeof work);
	fprintf(stderr, "sagebox mcp: draining (%s): no new sessions or jobs; %s; waiting for them at most %u s "
		"(drain_timeout)\n", why, work, s->cfg->drain_timeout_s);
}

/* Whether the drain is over: nothing open and quiet, or out of time. */
static bool drained(struct serving *s)
{
	unsigned inflight, sessions;
	uint64_t last, now = sb_now_ms();
	sb_http_open_work(s->h, &inflight, &sessions, &last);
	if (now >= s->deadline) {
		char work[256];
		open_work(s, work, sizeof work);
		fprintf(stderr, "sagebox mcp: drain_timeout (%u s) passed with %s: ending them\n",
			s->cfg->drain_timeout_s, work);
		return true;
	}
	/* An MCP session of the handshake era holds nothing once its requests
	 * are answered (its client opens a new one when told 404): not
	 * waited for, unlike sessions and background jobs. */
	(void)sessions;
	bool idle = !inflight && (!s->runner || !sb_runner_in_use(s->runner));
	return idle && now - s->drain_started >= QUIET_MS && (!last || now - last >= QUIET_MS);
}

/* The control socket of this instance, or NULL (said why: the server
 * serves without it). */
static struct sb_control *control_start(struct serving *s, int notify_fd)
{
	char path[256];
	struct sb_error err = {0};
	struct sb_control *c = NULL;
	if (sb_control_path(sb_config_instance(s->cfg), path, sizeof path, &err) == 0)
		c = sb_control_start(path, notify_fd, status_line, s, &err);
	if (!c)
		fprintf(stderr, "sagebox mcp: warning: no control socket, so sagebox mcp --drain cannot reach this "
			"server (SIGTERM still drains): %s%s%s\n", err.msg, err.hint[0] ? "; " : "", err.hint);
	return c;
}

int sb_cli_serve_http(const struct sb_http_options *o, struct sb_mcp_server *srv, struct sb_runner *runner,
		      const struct sb_config *cfg, const struct sb_error *runner_err)
{
	struct sb_error err = {0};
	int p[2];
	if (sb_pipe(p) < 0) {
		fprintf(stderr, "sagebox mcp: pipe: %s\n", strerror(errno));
		return SB_EXIT_FAILURE;
	}
	char token_path[4096];
	struct serving s = {.runner = runner, .cfg = cfg};
	if (!(s.h = sb_http_start(o, srv, token_path, sizeof token_path, &err))) {
		sb_cli_print_error(&err);
		sb_close(&p[0]);
		sb_close(&p[1]);
		return SB_EXIT_FAILURE;
	}
	if (!runner)
		sb_http_not_ready(s.h, runner_err && runner_err->msg[0] ? runner_err->msg : "the sandbox is not usable");
	sb_metric_set(SB_M_INFO, 1, (const char *[]){sb_config_instance(cfg)});
	sb_metric_set(SB_M_DRAINING, 0, NULL);
	sb_metrics_process_start();
	struct sb_control *ctl = control_start(&s, p[1]);
	signal_fd = p[1];
	sb_cli_stop_signals(on_signal);
	sb_cli_http_banner(sb_http_url(s.h), token_path, o, cfg->backend, sb_config_instance(cfg));
	for (bool stop = false; !stop;) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		int n = SB_RETRY_EINTR(poll(&pf, 1, s.drain_started ? 250 : -1));
		char b;
		if (n > 0 && read(p[0], &b, 1) == 1) {
			if (b == 'i' || (b == 't' && s.drain_started))
				stop = true; /* SIGINT, or a second SIGTERM: now */
			else if (!s.drain_started)
				drain(&s, srv, b == 't' ? "SIGTERM" : "sagebox mcp --drain");
		}
		if (!stop && s.drain_started)
			stop = drained(&s);
	}
	fprintf(stderr, "sagebox mcp: stopping: ending every connection and call\n");
	sb_http_stop(s.h);
	sb_control_stop(ctl); /* the askers hear "stopped" */
	sb_cli_stopping_signals();
	signal_fd = -1;
	sb_close(&p[0]);
	sb_close(&p[1]);
	return SB_EXIT_OK;
}

int sb_cli_drain(const struct sb_config *cfg)
{
	char path[256];
	struct sb_error err = {0};
	if (sb_control_path(sb_config_instance(cfg), path, sizeof path, &err) < 0 ||
	    sb_control_drain(path, true, stdout, &err) < 0) {
		sb_cli_print_error(&err);
		return SB_EXIT_FAILURE;
	}
	return SB_EXIT_OK;
}
