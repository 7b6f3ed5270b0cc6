#include "transport/http_ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/handle.h"
#include "mcp/jsonrpc.h"
#include "metrics/metrics.h"

void sb_http_set_body(struct sb_http_resp *r, int status, const char *type, char *body)
{
	free(r->body);
	r->status = status;
	r->content_type = type;
	r->body = body;
	r->body_len = body ? strlen(body) : 0;
}

void sb_http_refuse_data(struct sb_http_resp *r, int status, int code, const json_t *id, json_t *data,
			 const char *msg)
{
	json_t *e = sb_rpc_error(id, code, msg, data);
	if (!id)
		json_object_del(e, "id"); /* MCP: an error that answers no request has no id */
	sb_http_set_body(r, status, "application/json", json_dumps(e, JSON_COMPACT));
	json_decref(e);
}

void sb_http_refuse(struct sb_http_resp *r, int status, int code, const json_t *id, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	sb_http_refuse_data(r, status, code, id, NULL, msg);
}

void sb_http_refuse_elsewhere(struct sb_http_resp *r, const char *self, int status, const json_t *id,
			      const char *handle, const char *inst)
{
	const char *what = handle[0] == SB_HANDLE_SESSION ? "session" : handle[0] == SB_HANDLE_JOB ? "job" : "MCP session";
	const char *todo = handle[0] == SB_HANDLE_SESSION ? "open a new session"
			   : handle[0] == SB_HANDLE_JOB   ? "its output is lost; start the job again"
							  : "initialize again";
	char msg[512];
	snprintf(msg, sizeof msg, "%s %s ended with its instance %s (this is instance %s, which holds nothing of it): %s",
		 what, handle, inst, self, todo);
	sb_http_refuse_data(r, status, SB_RPC_HANDLE_GONE, id,
			    json_pack("{s:s, s:s, s:s}", "handle", handle, "instance", inst, "reason", "instance_gone"),
			    msg);
}

void sb_http_ops_health(const struct sb_http_health *st, struct sb_http_resp *r)
{
	const char *status = st->draining ? "draining" : st->ready ? "ready" : "not ready";
	json_t *o = json_pack("{s:s, s:s}", "status", status, "instance", st->instance);
	if (!st->ready && st->why[0])
		json_object_set_new(o, "why", json_string(st->why));
	if (st->draining) /* what the drain still waits for */
		json_object_update_new(o, json_pack("{s:I, s:I}", "requests_in_flight", (json_int_t)st->inflight,
						    "http_sessions", (json_int_t)st->sessions));
	sb_http_set_body(r, st->draining ? 404 : st->ready ? 200 : 503, "application/json",
			 json_dumps(o, JSON_COMPACT));
	json_decref(o);
}

void sb_http_ops_metrics(struct sb_http_resp *r)
{
	char *text = sb_metrics_render();
	if (!text) {
		sb_http_refuse(r, 503, SB_RPC_INTERNAL_ERROR, NULL, "Service Unavailable: out of memory");
		return;
	}
	/* The version of Prometheus' text exposition format. */
	sb_http_set_body(r, 200, "text/plain; version=0.0.4; charset=utf-8", text);
}
