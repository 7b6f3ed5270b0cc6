/* Answers the HTTP transport gives without the MCP layer: refusals in
 * JSON-RPC's shape, and what operators and routers ask an instance,
 * GET /health and GET /metrics. No sockets and no state of their own. */
#ifndef SAGEBOX_TRANSPORT_HTTP_OPS_H
#define SAGEBOX_TRANSPORT_HTTP_OPS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/handle.h"

struct sb_http_exchange;

/* An answer to one HTTP request, as the transport sends it. */
struct sb_http_resp {
	int status;
	const char *content_type;      /* static; NULL: no body */
	char *body;                    /* owned */
	size_t body_len;
	char session_id[SB_HANDLE_LEN]; /* Mcp-Session-Id to send, or "" */
	const char *allow;             /* Allow header (405), or NULL */
	bool www_authenticate;         /* 401: WWW-Authenticate: Bearer */
	bool rpc_error;                /* the answer is a JSON-RPC error */
	unsigned retry_after;          /* 429, 503: seconds, or 0 */
	bool close;                    /* end the connection after this answer (draining) */
	/* A deferred answer: read it from stream (as SSE when sse, else wait
	 * for its response and send that as JSON). The response holds the HTTP
	 * side's reference: close it with sb_http_exchange_close. */
	struct sb_http_exchange *stream;
	bool sse;
};

/* r's body (owned; NULL: none) with its status and type. */
void sb_http_set_body(struct sb_http_resp *r, int status, const char *type, char *body);
/* An HTTP refusal with a JSON-RPC error body (id: the request's, or none;
 * data stolen, may be NULL). */
void sb_http_refuse_data(struct sb_http_resp *r, int status, int code, const json_t *id, json_t *data,
			 const char *msg);
void sb_http_refuse(struct sb_http_resp *r, int status, int code, const json_t *id, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* The request names handle, which instance inst holds, not this one
 * (self): a router sent it here because that instance is gone. The error
 * names the handle and its instance and says what to do. */
void sb_http_refuse_elsewhere(struct sb_http_resp *r, const char *self, int status, const json_t *id,
			      const char *handle, const char *inst);

/* What /health tells. */
struct sb_http_health {
	const char *instance;
	bool ready, draining;
	char why[256];        /* draining: what started it; not ready: why */
	unsigned inflight, sessions;
};
/* 200 {"status":"ready"}, 404 "draining" (HAProxy's http-check
 * disable-on-404: no new work, but requests that name this instance's
 * handles still come), 503 "not ready"; JSON with the instance and why. */
void sb_http_ops_health(const struct sb_http_health *st, struct sb_http_resp *r);
/* GET /metrics: the Prometheus text format (metrics/metrics.h). */
void sb_http_ops_metrics(struct sb_http_resp *r);

#endif
