#include "transport/http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "mcp/jsonrpc.h"
#include "metrics/metrics.h"
#include "transport/http_gate.h"
#include "transport/http_ops.h"
#include "transport/http_reaper.h"
#include "transport/http_sse.h"
#include "util/buf.h"

struct sb_http {
	struct sb_http_options opt;
	struct sb_http_tokens tokens;
	struct sb_http_core *core;
	struct MHD_Daemon *daemon;
	struct MHD_Daemon *metrics;   /* --metrics-listen: /metrics and /health, no token */
	struct sb_http_gate *gate;    /* listens; hands over connections whose headers are in */
	struct sb_http_reaper *reaper; /* ends slow clients; ticks the core */
	char *cert, *key;
	char url[160];
	atomic_bool stopping;
	atomic_uint handed;           /* connections handed to libmicrohttpd, not yet closed */
	pthread_mutex_t log_lock;     /* mhd_log's repeat counter */
	char log_last[512];
	time_t log_at;
	unsigned log_repeats;
};

/* One request between its first and last callback. */
struct hreq {
	struct sb_http *h;
	struct sb_http_conn *conn;
	struct sb_http_ticket t;
	struct sb_http_resp r;
	bool head_ok, answered, too_large;
	struct sb_buf body;
	struct sb_http_exchange *x;   /* a deferred answer this request streams or waits for */
	char peer[64];
};

static struct sb_http_conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

static int fd_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	return i ? i->connect_fd : -1;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct sb_http *h = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		*socket_context = sb_http_conn_open(h->reaper, fd_of(c));
		return;
	}
	if (code == MHD_CONNECTION_NOTIFY_CLOSED)
		atomic_fetch_sub(&h->handed, 1);
	/* Called before libmicrohttpd closes the fd. */
	sb_http_conn_close(h->reaper, *socket_context);
	*socket_context = NULL;
}

/* The count of a message mhd_log held back, once its second is over. */
static void log_flush(struct sb_http *h, time_t now)
{
	pthread_mutex_lock(&h->log_lock);
	if (h->log_repeats && now != h->log_at) {
		fprintf(stderr, "sagebox mcp: http: (the last message %u more times)\n", h->log_repeats);
		h->log_repeats = 0;
	}
	pthread_mutex_unlock(&h->log_lock);
}

/* The reaper's housekeeping, once a second. */
static void tick(void *ctx)
{
	struct sb_http *h = ctx;
	log_flush(h, time(NULL));
	sb_http_core_tick(h->core);
}

static enum MHD_Result queue(struct MHD_Connection *c, struct hreq *q, struct MHD_Response *resp, int status)
{
	if (!resp)
		return MHD_NO;
	if (q->r.session_id[0])
		MHD_add_response_header(resp, "Mcp-Session-Id", q->r.session_id);
	if (q->r.allow)
		MHD_add_response_header(resp, "Allow", q->r.allow);
	if (q->r.www_authenticate)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"sagebox\"");
	if (q->r.close)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	if (q->r.retry_after) {
		char v[16];
		snprintf(v, sizeof v, "%u", q->r.retry_after);
		MHD_add_response_header(resp, "Retry-After", v);
	}
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	/* The reaper closes a kept-alive connection that sends no next request
	 * within request_timeout_s. Saying so lets a client (node's fetch keeps
	 * idle sockets 4 s) drop it first, instead of sending a request on a
	 * socket the server is closing at that moment (lost as "other side
	 * closed"). */
	char keep[32];
	snprintf(keep, sizeof keep, "timeout=%u", q->h->opt.request_timeout_s);
	if (q->t.owner && !q->r.close)
		MHD_add_response_header(resp, "Keep-Alive", keep);
	else if (!q->r.close) /* No valid token shown: the connection ends with this
			       * answer, so it cannot wait for a next request in a
			       * connection slot. */
		MHD_add_response_header(resp, "Connection", "close");
	enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, resp);
	MHD_destroy_response(resp);
	q->answered = true;
	return rc;
}

static enum MHD_Result answer_plain(struct MHD_Connection *c, struct hreq *q)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(q->r.body_len, q->r.body ? q->r.body : "",
								    MHD_RESPMEM_MUST_COPY);
	if (resp && q->r.content_type)
		MHD_add_response_header(resp, "Content-Type", q->r.content_type);
	return queue(c, q, resp, q->r.status);
}

static enum MHD_Result answer_stream(struct MHD_Connection *c, struct hreq *q)
{
	struct sb_http *h = q->h;
	int fd = fd_of(c);
	if (!q->r.sse) {
		/* A JSON answer: wait for it here (this connection's own thread). */
		while (!sb_http_exchange_wait_done(q->x, 1000))
			if (sb_http_peer_gone(&h->stopping, fd))
				return MHD_NO; /* the completion callback cancels the call */
		sb_http_core_json_answer(q->x, &q->r);
		return answer_plain(c, q);
	}
	return queue(c, q, sb_http_sse_response(q->x, fd, &h->stopping), 200);
}

static const char *lookup(void *hctx, const char *name)
{
	return MHD_lookup_connection_value(hctx, MHD_HEADER_KIND, name);
}

static void peer_name(struct MHD_Connection *c, char *buf, size_t size)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	snprintf(buf, size, "?");
	if (!i || !i->client_addr)
		return;
	const struct sockaddr *sa = i->client_addr;
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)size);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)size);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **req_cls)
{
	struct sb_http *h = cls;
	struct hreq *q = *req_cls;
	struct sb_http_req req = {.method = method, .path = url, .header = lookup, .hctx = c};
	if (!q) {
		/* The headers are in: check what needs no body before reading it. */
		if (!(q = calloc(1, sizeof *q)))
			return MHD_NO;
		*req_cls = q;
		q->h = h;
		q->conn = conn_of(c);
		peer_name(c, q->peer, sizeof q->peer);
		req.peer = q->peer;
		q->head_ok = sb_http_core_head(h->core, &req, &q->t, &q->r) == 0;
		if (q->t.owner)
			sb_http_conn_authed(h->reaper, q->conn);
		if (!q->head_ok && q->r.status == 413) {
			/* Read (and drop) the declared body first, as for a chunked
			 * one: answered before it is in, libmicrohttpd closes with
			 * the body unread, and the client gets a reset instead of
			 * the 413. The reaper ends a body that takes too long. */
			q->too_large = true;
			return MHD_YES;
		}
		return q->head_ok ? MHD_YES : answer_plain(c, q);
	}
	req.peer = q->peer;
	if (q->answered) {
		*upload_data_size = 0; /* a refused request's body is not kept */
		return MHD_YES;
	}
	if (*upload_data_size) {
		/* Past the cap the rest is read and dropped (libmicrohttpd answers
		 * only once the body is in); the reaper ends a body that never ends. */
		if (q->too_large || q->body.len + *upload_data_size > h->opt.limits.max_body) {
			q->too_large = true;
			sb_buf_free(&q->body);
		} else {
			sb_buf_append(&q->body, upload_data, *upload_data_size);
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	sb_http_conn_receiving(h->reaper, q->conn, false);
	if (q->too_large) {
		sb_http_resp_clear(&q->r);
		sb_http_core_too_large(h->core, &q->r);
		return answer_plain(c, q);
	}
	sb_http_core_body(h->core, &req, &q->t, q->body.data ? q->body.data : "", q->body.len, &q->r);
	sb_buf_free(&q->body);
	if (q->r.stream) {
		q->x = q->r.stream;
		q->r.stream = NULL;
		return answer_stream(c, q);
	}
	return answer_plain(c, q);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode toe)
{
	struct sb_http *h = cls;
	struct hreq *q = *req_cls;
	if (!q)
		return;
	if (q->x) /* not done: the client went away first, so the call is cancelled */
		sb_http_exchange_close(q->x, "the client closed the request's HTTP stream");
	sb_http_core_end(h->core, &q->t);
	sb_http_resp_clear(&q->r);
	sb_buf_free(&q->body);
	sb_http_conn_receiving(h->reaper, q->conn, true); /* the next request on this connection */
	free(q);
	*req_cls = NULL;
}

/* libmicrohttpd's messages. One repeated within a second is counted, not
 * printed: a burst of refused connections ("connection limit") would
 * otherwise write a line each into the journal. */
static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct sb_http *h = cls;
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	time_t now = time(NULL);
	pthread_mutex_lock(&h->log_lock);
	if (!strcmp(msg, h->log_last) && now == h->log_at) {
		h->log_repeats++;
	} else {
		if (h->log_repeats)
			fprintf(stderr, "sagebox mcp: http: (the last message %u more times)\n", h->log_repeats);
		fprintf(stderr, "sagebox mcp: http: %s\n", msg);
		snprintf(h->log_last, sizeof h->log_last, "%s", msg);
		h->log_at = now;
		h->log_repeats = 0;
	}
	pthread_mutex_unlock(&h->log_lock);
}

/* --metrics-listen: GET /metrics and GET /health, nothing else, with no
 * token (for Prometheus, which the operator points at this address). */
static enum MHD_Result on_metrics(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **req_cls)
{
	struct sb_http *h = cls;
	struct sb_http_resp r = {0};
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		r.allow = "GET, HEAD";
		sb_http_refuse(&r, 405, SB_RPC_INVALID_REQUEST, NULL, "Method Not Allowed: GET /metrics or /health");
	} else if (!strcmp(url, "/metrics")) {
		sb_http_ops_metrics(&r);
	} else if (!strcmp(url, "/health")) {
		sb_http_core_health(h->core, &r);
	} else {
		sb_http_refuse(&r, 404, SB_RPC_INVALID_REQUEST, NULL, "Not Found: this address serves /metrics and /health");
	}
	struct MHD_Response *resp = MHD_create_response_from_buffer(r.body_len, r.body ? r.body : "", MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc = MHD_NO;
	if (resp) {
		if (r.content_type)
			MHD_add_response_header(resp, "Content-Type", r.content_type);
		if (r.allow)
			MHD_add_response_header(resp, "Allow", r.allow);
		MHD_add_response_header(resp, "Cache-Control", "no-store");
		rc = MHD_queue_response(c, (unsigned)r.status, resp);
		MHD_destroy_response(resp);
	}
	sb_http_resp_clear(&r);
	return rc;
}

static int start_metrics(struct sb_http *h, struct sb_error *err)
{
	struct sockaddr_storage ss;
	sb_http_sockaddr(&h->opt.metrics_bind, &ss);
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG |
			 (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	h->metrics = MHD_start_daemon(flags, 0, NULL, NULL, on_metrics, h, MHD_OPTION_SOCK_ADDR, &ss,
				      MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h, MHD_OPTION_CONNECTION_LIMIT, 16u,
				      MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	if (!h->metrics)
		return sb_fail(err, "cannot serve the metrics on %s port %u (in use, or not an address of this machine?)",
			       h->opt.metrics_bind.addr, h->opt.metrics_bind.port);
	return 0;
}

/* The gate's connections waiting for their headers: a descriptor each,
 * half of what this process may open, within 64..1024. */
static unsigned max_pending(void)
{
	struct rlimit r;
	rlim_t n = getrlimit(RLIMIT_NOFILE, &r) == 0 ? r.rlim_cur / 2 : 256;
	return n < 64 ? 64 : n > 1024 ? 1024 : (unsigned)n;
}

/* The connection limit is kept here, never by libmicrohttpd: 0.9.75 can
 * leave a lock held when a connection added with MHD_add_connection meets
 * its own limit, and every connection thread then waits on it for ever
 * (seen: a burst of 1,000 requests, 257 threads stuck). Its limit is set
 * well above this one (closed connections leave its count only when their
 * threads are joined), which counts each connection from its hand-over to
 * its NOTIFY_CLOSED. */
static bool hand_over(void *ctx, int fd, const struct sockaddr *addr, socklen_t len)
{
	struct sb_http *h = ctx;
	if (atomic_fetch_add(&h->handed, 1) >= h->opt.max_connections) {
		atomic_fetch_sub(&h->handed, 1);
		return false;
	}
	if (MHD_add_connection(h->daemon, fd, addr, len) != MHD_YES)
		atomic_fetch_sub(&h->handed, 1); /* (it closed fd) */
	return true;
}

static int start_daemon(struct sb_http *h, struct sb_error *err)
{
	const struct sb_http_options *o = &h->opt;
	struct sockaddr_storage ss;
	socklen_t ss_len = sb_http_sockaddr(&o->bind, &ss);
	bool v6 = ss.ss_family == AF_INET6;
	/* No listen socket of its own: the gate (http_gate.h) accepts, and
	 * hands over only connections whose headers are in. */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
			 MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC | MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0) |
			 (h->cert ? MHD_USE_TLS : 0);
	struct MHD_OptionItem tls[] = {
		{MHD_OPTION_HTTPS_MEM_CERT, 0, h->cert},
		{MHD_OPTION_HTTPS_MEM_KEY, 0, h->key},
		{MHD_OPTION_END, 0, NULL},
	};
	h->daemon = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
		MHD_OPTION_CONNECTION_LIMIT, 2 * o->max_connections + 256, MHD_OPTION_CONNECTION_TIMEOUT, o->idle_timeout_s,
		/* Headers and request line must fit in 64 KiB (431 beyond). */
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_THREAD_STACK_SIZE,
		(size_t)(2 * 1024 * 1024), MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_NOTIFY_CONNECTION,
		on_connection, h, MHD_OPTION_ARRAY,
		h->cert ? tls : tls + 2, MHD_OPTION_END);
	if (!h->daemon)
		return sb_fail(err, "cannot start libmicrohttpd");
	struct sb_http_gate_options g = {
		.addr = (struct sockaddr *)&ss,
		.addr_len = ss_len,
		.tls = h->cert != NULL,
		.header_timeout_s = sb_http_header_timeout(&h->opt),
		.max_pending = max_pending(),
		.handoff = hand_over,
		.ctx = h,
	};
	struct sb_error gerr = {0};
	if (!(h->gate = sb_http_gate_start(&g, &gerr)))
		return sb_fail(err, "cannot listen on %s port %u (in use, or not an address of this machine?): %s",
			       o->bind.addr, o->bind.port, gerr.msg);
	unsigned port = sb_http_gate_port(h->gate);
	sb_http_url_format(&o->bind, port, h->cert != NULL, h->url, sizeof h->url);
	return 0;
}

/* The transport's gauges, at each scrape. */
static void collect(void *ctx)
{
	struct sb_http *h = ctx;
	unsigned inflight, sessions;
	uint64_t last;
	sb_http_core_open(h->core, &inflight, &sessions, &last);
	sb_metric_set(SB_M_HTTP_IN_FLIGHT, inflight, NULL);
	sb_metric_set(SB_M_HTTP_SESSIONS, sessions, NULL);
}

struct sb_http *sb_http_start(const struct sb_http_options *o, struct sb_mcp_server *srv, char *token_path,
			      size_t size, struct sb_error *err)
{
	if (sb_http_check_options(o, err) < 0)
		return NULL;
	struct sb_http *h = calloc(1, sizeof *h);
	if (!h)
		return sb_fail(err, "out of memory"), NULL;
	h->opt = *o;
	pthread_mutex_init(&h->log_lock, NULL);
	token_path[0] = '\0';
	int rc = 0;
	if (o->token_file) {
		rc = sb_http_tokens_load(o->token_file, &h->tokens, err);
		snprintf(token_path, size, "%s", o->token_file);
	} else if (!o->no_auth) {
		rc = sb_http_tokens_default(token_path, size, &h->tokens, err);
	}
	if (rc == 0 && o->tls_cert)
		rc = sb_http_tls_load(o, &h->cert, &h->key, err);
	if (rc == 0 && !(h->core = sb_http_core_new(srv, &h->opt.bind, o->no_auth ? NULL : &h->tokens, &h->opt.limits,
							  h->opt.instance)))
		rc = sb_fail(err, "out of memory");
	if (rc == 0 && !(h->reaper = sb_http_reaper_start(o->request_timeout_s, sb_http_header_timeout(o), tick, h, err)))
		rc = -1;
	if (rc == 0)
		rc = start_daemon(h, err);
	if (rc == 0 && o->metrics_listen)
		rc = start_metrics(h, err);
	if (rc < 0) {
		sb_http_stop(h);
		return NULL;
	}
	sb_metrics_collector_add(collect, h);
	return h;
}

const char *sb_http_url(const struct sb_http *h)
{
	return h->url;
}

void sb_http_drain(struct sb_http *h, const char *why)
{
	sb_http_core_drain(h->core, why);
}

void sb_http_open_work(struct sb_http *h, unsigned *inflight, unsigned *sessions, uint64_t *last_ms)
{
	sb_http_core_open(h->core, inflight, sessions, last_ms);
}

void sb_http_not_ready(struct sb_http *h, const char *why)
{
	sb_http_core_not_ready(h->core, why);
}


void sb_http_stop(struct sb_http *h)
{
	if (!h)
		return;
	sb_metrics_collector_remove(collect, h);
	atomic_store(&h->stopping, true);
	if (h->metrics)
		MHD_stop_daemon(h->metrics);
	sb_http_gate_stop(h->gate); /* no more hand-overs to the daemon */
	if (h->daemon)
		MHD_stop_daemon(h->daemon); /* ends every connection; their calls are cancelled */
	sb_http_reaper_stop(h->reaper);
	sb_http_core_free(h->core);
	sb_http_tokens_free(&h->tokens);
	free(h->cert);
	if (h->key)
		explicit_bzero(h->key, strlen(h->key));
	free(h->key);
	pthread_mutex_destroy(&h->log_lock);
	free(h);
}
