#include "transport/http_core.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "mcp/jsonrpc.h"
#include "mcp/message.h"
#include "mcp/revision.h"
#include "transport/http_ops.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/jsontext.h"

/* A session of the handshake era (2024-11-05 .. 2025-11-25): one MCP
 * client with its negotiated revision, log level and calls. */
struct sb_http_session {
	char id[SB_HANDLE_LEN];        /* a handle (m_INSTANCE_SECRET): names this instance, unguessable */
	struct sb_mcp_client *client;
	struct sb_http_owner *owner;
	unsigned busy;                 /* requests using it now */
	bool ended;                    /* DELETE, expiry or shutdown: no new requests */
	time_t last_used;
	struct sb_http_session *next;
};

/* One client (one token). */
struct sb_http_owner {
	char name[64];
	struct sb_mcp_client *stateless;  /* its 2026-07-28 requests */
	struct sb_http_session *sessions;
	unsigned nsessions;
	unsigned inflight;
};

struct sb_http_core {
	struct sb_mcp_server *srv;
	const struct sb_http_bind *bind;
	const struct sb_http_tokens *tokens;
	const struct sb_http_limits *lim;
	const char *instance;
	pthread_mutex_t lock;             /* owners' sessions, counters and the state below */
	struct sb_http_owner *owners;
	size_t nowners;
	unsigned inflight;
	unsigned nsessions;               /* of every owner */
	uint64_t last_ms;                 /* the last request's head */
	bool draining;
	char drain_why[128];
	char not_ready[256];              /* "" ready */
};

/* Messages that answer no request have no stream over HTTP: dropped (they
 * are on stderr too). */
static int drop_send(void *ctx, const json_t *msg)
{
	return 0;
}
static const struct sb_mcp_sink drop_sink = {.send = drop_send};

struct sb_http_core *sb_http_core_new(struct sb_mcp_server *srv, const struct sb_http_bind *bind,
				      const struct sb_http_tokens *tokens, const struct sb_http_limits *lim,
				      const char *instance)
{
	struct sb_http_core *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	h->srv = srv;
	h->bind = bind;
	h->tokens = tokens;
	h->lim = lim;
	h->instance = instance;
	pthread_mutex_init(&h->lock, NULL);
	h->nowners = tokens ? tokens->n : 1;
	sb_mcp_server_set_clients(srv, (unsigned)h->nowners);
	h->owners = calloc(h->nowners, sizeof *h->owners);
	for (size_t i = 0; h->owners && i < h->nowners; i++) {
		struct sb_http_owner *o = &h->owners[i];
		snprintf(o->name, sizeof o->name, "%s", tokens ? tokens->v[i].name : "local");
		if (!(o->stateless = sb_mcp_client_new(srv, o->name, &drop_sink)))
			break;
	}
	for (size_t i = 0; h->owners && i < h->nowners; i++)
		if (!h->owners[i].stateless) {
			sb_http_core_free(h);
			return NULL;
		}
	if (!h->owners) {
		sb_http_core_free(h);
		return NULL;
	}
	return h;
}

static void session_free(struct sb_http_session *s)
{
	sb_mcp_client_free(s->client); /* cancels its calls, joins their threads */
	free(s);
}

void sb_http_core_free(struct sb_http_core *h)
{
	if (!h)
		return;
	for (size_t i = 0; h->owners && i < h->nowners; i++) {
		struct sb_http_owner *o = &h->owners[i];
		for (struct sb_http_session *s = o->sessions, *n; s; s = n) {
			n = s->next;
			session_free(s);
		}
		sb_mcp_client_free(o->stateless);
	}
	free(h->owners);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

void sb_http_resp_clear(struct sb_http_resp *r)
{
	free(r->body);
	memset(r, 0, sizeof *r);
}

void sb_http_core_too_large(struct sb_http_core *h, struct sb_http_resp *r)
{
	sb_http_refuse(r, 413, SB_RPC_INVALID_REQUEST, NULL, "Content Too Large: the limit is %zu bytes", h->lim->max_body);
}

static const char *hdr(const struct sb_http_req *q, const char *name)
{
	return q->header(q->hctx, name);
}

/* The owner whose token was presented, or NULL. */
static struct sb_http_owner *authenticate(struct sb_http_core *h, const struct sb_http_req *q)
{
	if (!h->tokens)
		return &h->owners[0];
	const char *a = hdr(q, "Authorization");
	if (!a || strncasecmp(a, "Bearer ", 7))
		return NULL;
	a += 7;
	while (*a == ' ')
		a++;
	size_t n = strlen(a);
	while (n && a[n - 1] == ' ')
		n--;
	const struct sb_http_token *t = sb_http_tokens_match(h->tokens, a, n);
	return t ? &h->owners[t - h->tokens->v] : NULL;
}

/* The owner's live session with this id; taken (busy) under the lock. A
 * session of another owner is not found: one token never reaches another's. */
static struct sb_http_session *session_take(struct sb_http_core *h, struct sb_http_owner *o, const char *id)
{
	struct sb_http_session *found = NULL;
	pthread_mutex_lock(&h->lock);
	for (struct sb_http_session *s = o->sessions; s && id; s = s->next)
		if (!s->ended && strlen(id) == strlen(s->id) && !strcmp(id, s->id)) {
			found = s;
			s->busy++;
			s->last_used = time(NULL);
			break;
		}
	pthread_mutex_unlock(&h->lock);
	return found;
}

/* Unlink an ended session nobody uses; returns it for freeing outside the lock. */
static struct sb_http_session *unlink_if_idle_locked(struct sb_http_core *h, struct sb_http_session *s)
{
	if (!s->ended || s->busy)
		return NULL;
	for (struct sb_http_session **pp = &s->owner->sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			s->owner->nsessions--;
			h->nsessions--;
			return s;
		}
	return NULL;
}

static void session_release(struct sb_http_core *h, struct sb_http_session *s, bool end)
{
	pthread_mutex_lock(&h->lock);
	s->busy--;
	s->ended = s->ended || end;
	struct sb_http_session *gone = unlink_if_idle_locked(h, s);
	pthread_mutex_unlock(&h->lock);
	if (gone)
		session_free(gone);
}

static bool draining(struct sb_http_core *h)
{
	pthread_mutex_lock(&h->lock);
	bool d = h->draining;
	pthread_mutex_unlock(&h->lock);
	return d;
}

static struct sb_http_session *session_open(struct sb_http_core *h, struct sb_http_owner *o)
{
	struct sb_http_session *s = calloc(1, sizeof *s);
	if (!s || sb_handle_new(s->id, SB_HANDLE_HTTP, h->instance) < 0) {
		free(s);
		return NULL;
	}
	s->owner = o;
	s->busy = 1;
	s->last_used = time(NULL);
	if (!(s->client = sb_mcp_client_new(h->srv, o->name, &drop_sink))) {
		free(s);
		return NULL;
	}
	pthread_mutex_lock(&h->lock);
	bool room = o->nsessions < h->lim->max_sessions_client;
	if (room) {
		s->next = o->sessions;
		o->sessions = s;
		o->nsessions++;
		h->nsessions++;
	}
	pthread_mutex_unlock(&h->lock);
	if (!room) {
		session_free(s);
		return NULL;
	}
	return s;
}

void sb_http_core_health(struct sb_http_core *h, struct sb_http_resp *r)
{
	struct sb_http_health st = {.instance = h->instance};
	pthread_mutex_lock(&h->lock);
	st.draining = h->draining;
	snprintf(st.why, sizeof st.why, "%s", h->draining ? h->drain_why : h->not_ready);
	st.ready = !h->draining && !h->not_ready[0];
	st.inflight = h->inflight;
	st.sessions = h->nsessions;
	pthread_mutex_unlock(&h->lock);
	sb_http_ops_health(&st, r);
}

int sb_http_core_head(struct sb_http_core *h, const struct sb_http_req *q, struct sb_http_ticket *t,
		      struct sb_http_resp *r)
{
	char why[320];
	memset(t, 0, sizeof *t);
	if (!strcmp(q->path, "/health")) {
		if (strcmp(q->method, "GET") && strcmp(q->method, "HEAD")) {
			r->allow = "GET, HEAD";
			sb_http_refuse(r, 405, SB_RPC_INVALID_REQUEST, NULL, "Method Not Allowed: GET /health");
		} else {
			sb_http_core_health(h, r);
		}
		return -1;
	}
	pthread_mutex_lock(&h->lock);
	r->close = h->draining; /* a router's kept connection moves to another instance */
	pthread_mutex_unlock(&h->lock);
	if (sb_http_check_host(h->bind, hdr(q, "Host"), why, sizeof why) < 0 ||
	    sb_http_check_origin(h->bind, hdr(q, "Origin"), why, sizeof why) < 0) {
		fprintf(stderr, "sagebox mcp: http: 403 for %s: %s\n", q->peer ? q->peer : "?", why);
		sb_http_refuse(r, 403, SB_RPC_INVALID_REQUEST, NULL, "Forbidden: %s", why);
		return -1;
	}
	bool metrics = !strcmp(q->path, "/metrics");
	if (strcmp(q->path, "/mcp") && !metrics) {
		sb_http_refuse(r, 404, SB_RPC_INVALID_REQUEST, NULL, "Not Found: the MCP endpoint is /mcp");
		return -1;
	}
	if (!metrics) { /* the drain waits for MCP's requests, not for scrapes */
		pthread_mutex_lock(&h->lock);
		h->last_ms = sb_now_ms();
		pthread_mutex_unlock(&h->lock);
	}
	struct sb_http_owner *o = authenticate(h, q);
	if (!o) {
		fprintf(stderr, "sagebox mcp: http: 401 for %s: %s token\n", q->peer ? q->peer : "?",
			hdr(q, "Authorization") ? "wrong" : "no");
		r->www_authenticate = true;
		sb_http_refuse(r, 401, SB_RPC_INVALID_REQUEST, NULL,
		       "Unauthorized: send the token as \"Authorization: Bearer TOKEN\" (see sagebox mcp --help)");
		return -1;
	}
	t->owner = o;
	if (metrics) {
		if (strcmp(q->method, "GET") && strcmp(q->method, "HEAD")) {
			r->allow = "GET, HEAD";
			sb_http_refuse(r, 405, SB_RPC_INVALID_REQUEST, NULL, "Method Not Allowed: GET /metrics");
		} else {
			sb_http_ops_metrics(r);
		}
		return -1;
	}
	if (strcmp(q->method, "POST") && strcmp(q->method, "DELETE")) {
		/* No standalone GET stream: nothing is sent that answers no request. */
		r->allow = "POST, DELETE";
		sb_http_refuse(r, 405, SB_RPC_INVALID_REQUEST, NULL, "Method Not Allowed: POST JSON-RPC messages to /mcp");
		return -1;
	}
	if (!strcmp(q->method, "POST")) {
		const char *ct = hdr(q, "Content-Type");
		if (!ct || strncasecmp(ct, "application/json", 16) || (ct[16] && ct[16] != ';' && ct[16] != ' ')) {
			sb_http_refuse(r, 415, SB_RPC_INVALID_REQUEST, NULL,
			       "Unsupported Media Type: the body must be one JSON-RPC message (Content-Type: application/json)");
			return -1;
		}
		const char *cl = hdr(q, "Content-Length");
		if (cl && strtoull(cl, NULL, 10) > h->lim->max_body) {
			sb_http_core_too_large(h, r);
			return -1;
		}
	}
	pthread_mutex_lock(&h->lock);
	bool room = o->inflight < h->lim->max_inflight_client && h->inflight < h->lim->max_inflight_total;
	if (room) {
		o->inflight++;
		h->inflight++;
		t->counted = true;
	}
	pthread_mutex_unlock(&h->lock);
	if (!room) {
		/* One client cannot take every slot: others keep being answered. */
		r->retry_after = 1;
		sb_http_refuse(r, 429, SB_RPC_INVALID_REQUEST, NULL,
		       "Too Many Requests: at most %u requests at once per client and %u in all; retry later",
		       h->lim->max_inflight_client, h->lim->max_inflight_total);
		return -1;
	}
	return 0;
}

void sb_http_core_end(struct sb_http_core *h, struct sb_http_ticket *t)
{
	if (t->session)
		session_release(h, t->session, false);
	if (t->counted) {
		pthread_mutex_lock(&h->lock);
		t->owner->inflight--;
		h->inflight--;
		pthread_mutex_unlock(&h->lock);
	}
	memset(t, 0, sizeof *t);
}

static void do_delete(struct sb_http_core *h, const struct sb_http_req *q, struct sb_http_ticket *t,
		      struct sb_http_resp *r)
{
	const char *sid = hdr(q, "Mcp-Session-Id");
	if (!sid) {
		r->allow = "POST, DELETE";
		sb_http_refuse(r, 405, SB_RPC_INVALID_REQUEST, NULL,
		       "Method Not Allowed: DELETE ends a session and needs its Mcp-Session-Id");
		return;
	}
	struct sb_http_session *s = session_take(h, t->owner, sid);
	if (!s) {
		sb_http_refuse(r, 404, SB_RPC_HANDLE_GONE, NULL, "Session not found");
		return;
	}
	/* Its calls end now (sandboxes killed); it is freed when its last request ends. */
	sb_mcp_client_cancel_all(s->client, "the client ended its HTTP session (DELETE)");
	session_release(h, s, true);
	sb_http_set_body(r, 200, NULL, NULL);
}

void sb_http_core_json_answer(struct sb_http_exchange *x, struct sb_http_resp *r)
{
	struct sb_http_msg *m, *resp = NULL;
	while ((m = sb_http_exchange_take(x))) {
		if (m->response) {
			sb_http_msg_free(resp);
			resp = m;
		} else {
			sb_http_msg_free(m); /* a JSON answer carries no notifications */
		}
	}
	pthread_mutex_lock(&x->lock);
	int rejected = x->rejected;
	pthread_mutex_unlock(&x->lock);
	if (!resp) {
		sb_http_set_body(r, 202, NULL, NULL); /* a notification, accepted */
		return;
	}
	int status = 200;
	if (rejected)
		status = rejected == SB_RPC_METHOD_NOT_FOUND ? 404 : 400; /* MCP 2026-07-28 */
	else if (resp->null_id)
		status = 400; /* a message that is no valid request */
	sb_http_set_body(r, status, "application/json", resp->text);
	r->rpc_error = resp->error;
	resp->text = NULL;
	sb_http_msg_free(resp);
}

/* Whether the client takes an SSE stream (MCP clients accept both). */
static bool wants_sse(const struct sb_http_req *q)
{
	const char *a = hdr(q, "Accept");
	return a && strstr(a, "text/event-stream");
}

void sb_http_core_body(struct sb_http_core *h, const struct sb_http_req *q, struct sb_http_ticket *t,
		       const char *body, size_t len, struct sb_http_resp *r)
{
	if (!strcmp(q->method, "DELETE")) {
		do_delete(h, q, t, r);
		return;
	}
	/* Parsed once, here; the era is the protocol layer's to decide. */
	const char *hv = hdr(q, "MCP-Protocol-Version");
	struct sb_mcp_message m;
	sb_mcp_message_parse(body, len, hv, &m);
	bool modern = m.modern;
	/* Routed on what the message holds (a JSON object or array; anything
	 * else goes to the protocol layer, which says what is wrong). */
	const json_t *msg = json_is_object(m.rpc.root) || json_is_array(m.rpc.root) ? m.rpc.root : NULL;
	const char *method = sb_json_text(json_object_get(msg, "method"));
	const json_t *id = json_object_get(msg, "id");
	struct sb_mcp_client *client = NULL;
	bool init = method && !strcmp(method, "initialize") && !modern;
	char why[320];

	if (!msg) {
		client = t->owner->stateless; /* not JSON: the protocol layer says so (-32700) */
	} else if (modern) {
		/* Intermediaries may route on these headers: they must say what the body says. */
		if (sb_http_check_mirrors(msg, hv, hdr(q, "Mcp-Method"), hdr(q, "Mcp-Name"), why, sizeof why) < 0 ||
		    sb_http_check_params(msg, q->header, q->hctx, why, sizeof why) < 0) {
			sb_http_refuse(r, 400, SB_RPC_HEADER_MISMATCH, sb_rpc_id_valid(id) ? id : NULL, "%s", why);
			goto out;
		}
		/* The headers said the same, so this is where a router sent it. */
		const char *handle = sb_http_routing_handle(msg);
		char inst[SB_INSTANCE_MAX + 1];
		if (handle && sb_handle_elsewhere(handle, h->instance, inst)) {
			sb_http_refuse_elsewhere(r, h->instance, 200, sb_rpc_id_valid(id) ? id : NULL, handle, inst);
			goto out;
		}
		client = t->owner->stateless;
	} else if (hv && !sb_rev_is_legacy(hv)) {
		sb_http_refuse(r, 400, SB_RPC_INVALID_REQUEST, sb_rpc_id_valid(id) ? id : NULL,
		       "Bad Request: unsupported MCP-Protocol-Version %.64s", hv);
		goto out;
	} else if (init) {
		if (draining(h)) {
			/* The router sends new work to the other instances. */
			r->retry_after = 1;
			sb_http_refuse(r, 503, SB_RPC_INVALID_REQUEST, sb_rpc_id_valid(id) ? id : NULL,
			       "Service Unavailable: instance %s is draining (shutting down) and opens no new "
			       "session; connect again (through the router: another instance)", h->instance);
			goto out;
		}
		if (!(t->session = session_open(h, t->owner))) {
			r->retry_after = 5;
			sb_http_refuse(r, 429, SB_RPC_INVALID_REQUEST, sb_rpc_id_valid(id) ? id : NULL,
			       "Too Many Requests: this client has %u sessions open; end one (HTTP DELETE) or wait",
			       h->lim->max_sessions_client);
			goto out;
		}
		client = t->session->client;
	} else {
		const char *sid = hdr(q, "Mcp-Session-Id");
		if (!sid && !method) {
			sb_http_set_body(r, 202, NULL, NULL); /* a response to nothing we asked: ignored */
			goto out;
		}
		if (!sid) {
			sb_http_refuse(r, 400, SB_RPC_INVALID_REQUEST, sb_rpc_id_valid(id) ? id : NULL,
			       "Bad Request: Mcp-Session-Id header is required (send initialize first, or use "
			       "protocol revision 2026-07-28 with _meta on each request)");
			goto out;
		}
		char inst[SB_INSTANCE_MAX + 1];
		if (!(t->session = session_take(h, t->owner, sid)) && sb_handle_elsewhere(sid, h->instance, inst)) {
			sb_http_refuse_elsewhere(r, h->instance, 404, sb_rpc_id_valid(id) ? id : NULL, sid, inst);
			goto out;
		}
		if (!t->session) {
			sb_http_refuse(r, 404, SB_RPC_HANDLE_GONE, sb_rpc_id_valid(id) ? id : NULL,
			       "Session not found (it ended, expired, or belongs to another client): initialize again");
			goto out;
		}
		client = t->session->client;
	}

	bool sse = wants_sse(q);
	struct sb_http_exchange *x = sb_http_exchange_new(client, sse);
	if (!x) {
		sb_http_refuse(r, 503, SB_RPC_INTERNAL_ERROR, NULL, "Service Unavailable: out of memory");
		goto out;
	}
	struct sb_mcp_sink sink = sb_http_exchange_sink(x);
	struct sb_mcp_msg_opts opts = {.stream_ids = modern, .stream_logs = !modern};
	sb_mcp_handle_parsed(client, &m, &sink, &opts);
	sb_mcp_client_idle(client);
	if (t->session)
		snprintf(r->session_id, sizeof r->session_id, "%s", t->session->id);
	if (sb_http_exchange_done(x)) {
		sb_http_core_json_answer(x, r);
		sb_http_exchange_close(x, NULL);
		if (init && r->rpc_error) {
			session_release(h, t->session, true); /* a refused initialize opens nothing */
			t->session = NULL;
			r->session_id[0] = '\0';
		}
	} else {
		r->status = 200;
		r->stream = x;
		r->sse = sse;
	}
out:
	sb_mcp_message_free(&m);
}

void sb_http_core_drain(struct sb_http_core *h, const char *why)
{
	pthread_mutex_lock(&h->lock);
	h->draining = true;
	snprintf(h->drain_why, sizeof h->drain_why, "%s", why);
	pthread_mutex_unlock(&h->lock);
}

void sb_http_core_open(struct sb_http_core *h, unsigned *inflight, unsigned *sessions, uint64_t *last_ms)
{
	pthread_mutex_lock(&h->lock);
	*inflight = h->inflight;
	*sessions = h->nsessions;
	*last_ms = h->last_ms;
	pthread_mutex_unlock(&h->lock);
}

void sb_http_core_not_ready(struct sb_http_core *h, const char *why)
{
	pthread_mutex_lock(&h->lock);
	snprintf(h->not_ready, sizeof h->not_ready, "%s", why ? why : "");
	pthread_mutex_unlock(&h->lock);
}

void sb_http_core_tick(struct sb_http_core *h)
{
	time_t now = time(NULL);
	struct sb_http_session *gone = NULL;
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < h->nowners; i++)
		for (struct sb_http_session *s = h->owners[i].sessions, *n; s; s = n) {
			n = s->next;
			if (!s->busy && now - s->last_used > (time_t)h->lim->session_idle_s)
				s->ended = true;
			struct sb_http_session *g = unlink_if_idle_locked(h, s);
			if (g) {
				g->next = gone;
				gone = g;
			}
		}
	pthread_mutex_unlock(&h->lock);
	for (struct sb_http_session *n; gone; gone = n) {
		n = gone->next;
		session_free(gone);
	}
	for (size_t i = 0; i < h->nowners; i++)
		sb_mcp_client_idle(h->owners[i].stateless);
}

void sb_http_core_handle(struct sb_http_core *h, const struct sb_http_req *q, const char *body, size_t len,
			 struct sb_http_resp *r)
{
	struct sb_http_ticket t;
	memset(r, 0, sizeof *r);
	if (sb_http_core_head(h, q, &t, r) == 0) {
		if (len > h->lim->max_body)
			sb_http_core_too_large(h, r);
		else
			sb_http_core_body(h, q, &t, body, len, r);
	}
	if (r->stream) {
		struct sb_http_exchange *x = r->stream;
		while (!sb_http_exchange_wait_done(x, 1000))
			;
		r->stream = NULL;
		sb_http_core_json_answer(x, r);
		sb_http_exchange_close(x, NULL);
	}
	sb_http_core_end(h, &t);
}
