/* The HTTP transport's request handling, with no sockets: what one HTTP
 * request to the MCP endpoint gets, from its method, path, headers and
 * body. transport/http.c feeds it from libmicrohttpd; a fuzzer can call it
 * directly (sb_http_core_handle).
 *
 * Each token is one client (an owner): its requests of the 2026-07-28 era
 * go to its own stateless MCP client, and each initialize of the handshake
 * era opens a session (Mcp-Session-Id) that only this token can use, end
 * (DELETE) or see. */
#ifndef SAGEBOX_TRANSPORT_HTTP_CORE_H
#define SAGEBOX_TRANSPORT_HTTP_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/handle.h"
#include "mcp/mcp.h"
#include "transport/http_auth.h"
#include "transport/http_exchange.h"
#include "transport/http_guard.h"
#include "transport/http_ops.h"

struct sb_http_limits {
	size_t max_body;               /* bytes of a POST body (413 beyond) */
	unsigned max_inflight_client;  /* requests at once per client (429 beyond) */
	unsigned max_inflight_total;   /* requests at once over all clients (429 beyond) */
	unsigned max_sessions_client;  /* handshake-era sessions per client */
	unsigned session_idle_s;       /* an idle session ends after this */
};

/* The defaults (and the flags that change them, in cli/cli_mcp.c). */
#define SB_HTTP_MAX_BODY (8u * 1024 * 1024)
#define SB_HTTP_MAX_INFLIGHT_CLIENT 32
#define SB_HTTP_MAX_INFLIGHT_TOTAL 128
#define SB_HTTP_MAX_SESSIONS_CLIENT 32
#define SB_HTTP_SESSION_IDLE_S 3600

struct sb_http_core;
struct sb_http_owner;
struct sb_http_session;

/* A request as the core sees it. header(hctx, name) returns a header's
 * value (names are matched without regard to case) or NULL. */
struct sb_http_req {
	const char *method;
	const char *path;
	const char *(*header)(void *hctx, const char *name);
	void *hctx;
	const char *peer;              /* the client's address, for the log */
};

/* What a request holds from its head to its end. */
struct sb_http_ticket {
	struct sb_http_owner *owner;
	struct sb_http_session *session;
	bool counted;                  /* counts against the in-flight caps */
};

/* tokens NULL: no authentication (--insecure-no-auth), one client "local".
 * instance: this server's name (the `instance` setting), which the
 * Mcp-Session-Id it hands out names (core/handle.h). bind, tokens, lim and
 * instance must outlive the core. */
struct sb_http_core *sb_http_core_new(struct sb_mcp_server *srv, const struct sb_http_bind *bind,
				      const struct sb_http_tokens *tokens, const struct sb_http_limits *lim,
				      const char *instance);
/* Ends every session and client (their calls cancelled, threads joined). */
void sb_http_core_free(struct sb_http_core *h);

/* What needs no body: Host, Origin, path, method, token, the in-flight caps
 * and a declared Content-Length. 0: read the body and call
 * sb_http_core_body; -1: answer with r (already filled). Either way call
 * sb_http_core_end when the request is over. */
int sb_http_core_head(struct sb_http_core *h, const struct sb_http_req *q, struct sb_http_ticket *t,
		      struct sb_http_resp *r);

/* The whole body arrived: answer it (r), now or through r->stream. */
void sb_http_core_body(struct sb_http_core *h, const struct sb_http_req *q, struct sb_http_ticket *t,
		       const char *body, size_t len, struct sb_http_resp *r);

/* Turn a finished (done) stream into its JSON answer in r. */
void sb_http_core_json_answer(struct sb_http_exchange *x, struct sb_http_resp *r);

/* The answer to a body longer than the limit (413). */
void sb_http_core_too_large(struct sb_http_core *h, struct sb_http_resp *r);

/* The request is over. */
void sb_http_core_end(struct sb_http_core *h, struct sb_http_ticket *t);

/* Housekeeping, about once a second: end sessions idle too long. */
void sb_http_core_tick(struct sb_http_core *h);

/* GET /health: for routers and orchestrators, with no token and no Host
 * check (HAProxy's check sends none); it says nothing secret
 * (transport/http_ops.h). */
void sb_http_core_health(struct sb_http_core *h, struct sb_http_resp *r);

/* Draining: from now on /health says so (404, which HAProxy's
 * http-check disable-on-404 reads as "only requests that name this
 * instance"), an initialize opens no session (503), and every answer
 * ends its connection, so a router's kept connections move elsewhere.
 * Requests in flight and open sessions go on. why: what started it. */
void sb_http_core_drain(struct sb_http_core *h, const char *why);
/* What is still open: requests in flight, sessions of the handshake era,
 * and the time of the last request (monotonic ms). */
void sb_http_core_open(struct sb_http_core *h, unsigned *inflight, unsigned *sessions, uint64_t *last_ms);
/* Why the server cannot take work (runner missing: the sandbox is not
 * usable), shown by /health as "not ready"; NULL: ready. The text is
 * copied. */
void sb_http_core_not_ready(struct sb_http_core *h, const char *why);

void sb_http_resp_clear(struct sb_http_resp *r);

/* One request start to end, with no sockets (for a fuzzer): r gets the
 * final answer; a streamed one is collected until it is done. */
void sb_http_core_handle(struct sb_http_core *h, const struct sb_http_req *q, const char *body, size_t len,
			 struct sb_http_resp *r);

#endif
