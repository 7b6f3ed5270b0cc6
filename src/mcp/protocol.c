/* The MCP lifecycle and methods: initialize (version negotiation), ping,
 * tools/list, tools/call, logging/setLevel, and the notifications
 * initialized and cancelled. Requests other than initialize and ping before
 * initialize, and a second initialize, are answered with errors. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "mcp/toolcall.h"
#include "mcp/tools.h"

/* Newest first: an unknown revision is answered with the first. */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

bool sb_mcp_version_has(const char *version, const char *since)
{
	return version && strcmp(version, since) >= 0;
}

struct sb_mcp *sb_mcp_new(const struct sb_config *cfg, struct sb_runner *runner,
			  const struct sb_error *runner_err, struct sb_audit *audit,
			  const struct sb_mcp_sink *sink)
{
	struct sb_mcp *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->cfg = cfg;
	s->runner = runner;
	if (runner_err)
		s->runner_err = *runner_err;
	s->audit = audit;
	s->sink = *sink;
	s->log_level = SB_LOG_DEFAULT_CLIENT;
	pthread_mutex_init(&s->lock, NULL);
	s->calls = sb_calls_new(s, cfg->max_concurrent);
	if (!s->calls) {
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	return s;
}

void sb_mcp_shutdown(struct sb_mcp *s)
{
	sb_calls_shutdown(s->calls);
}

void sb_mcp_free(struct sb_mcp *s)
{
	if (!s)
		return;
	sb_calls_free(s->calls);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void sb_mcp_idle(struct sb_mcp *s)
{
	sb_calls_reap(s->calls);
}

int sb_mcp_send(struct sb_mcp *s, json_t *msg)
{
	if (!msg)
		return -1;
	int rc = s->sink.send(s->sink.ctx, msg);
	json_decref(msg);
	return rc;
}

const char *sb_mcp_version(struct sb_mcp *s)
{
	pthread_mutex_lock(&s->lock);
	const char *v = s->version;
	pthread_mutex_unlock(&s->lock);
	return v;
}

/* What a method handler produced. */
struct reply {
	json_t *result;  /* the result (owned), or NULL with an error set */
	int code;        /* 0, or a JSON-RPC error code */
	char msg[768];
	bool deferred;   /* a thread will answer (tools/call) */
};

__attribute__((format(printf, 3, 4))) static void fail(struct reply *r, int code, const char *fmt, ...)
{
	va_list ap;
	r->code = code;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
}

static json_t *server_info(const char *version)
{
	json_t *info = json_pack("{s:s, s:s, s:s}", "name", "sagebox", "version", SAGEBOX_MCP_VERSION, "title",
				 "sagebox: SageMath, Python and shell in a sandbox");
	if (sb_mcp_version_has(version, "2025-11-25"))
		json_object_set_new(info, "description",
				    json_string("Runs SageMath, Python and shell code written by a model in an "
						"isolated local sandbox, with no network and no host files."));
	return info;
}

static void h_initialize(struct sb_mcp *s, const json_t *params, struct reply *r)
{
	const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
	if (!asked) {
		fail(r, SB_RPC_INVALID_PARAMS, "Invalid params: initialize needs \"protocolVersion\" (a string)");
		return;
	}
	json_t *caps = json_object_get(params, "capabilities");
	if (caps && !json_is_object(caps)) {
		fail(r, SB_RPC_INVALID_PARAMS, "Invalid params: \"capabilities\" must be an object");
		return;
	}
	const char *chosen = versions[0];
	for (size_t i = 0; i < sizeof versions / sizeof *versions; i++)
		if (!strcmp(asked, versions[i]))
			chosen = versions[i];

	pthread_mutex_lock(&s->lock);
	bool again = s->initialized;
	if (!again) {
		s->initialized = true;
		s->version = chosen;
	}
	pthread_mutex_unlock(&s->lock);
	if (again) {
		fail(r, SB_RPC_INVALID_REQUEST,
		     "Invalid Request: the session is already initialized; initialize may be sent only once");
		return;
	}

	json_t *client = json_object_get(params, "clientInfo");
	const char *cname = json_string_value(json_object_get(client, "name"));
	const char *cver = json_string_value(json_object_get(client, "version"));
	sb_mcp_log(s, SB_LOG_INFO, "client %s %s asked for protocol %.32s; using %s", cname ? cname : "(unnamed)",
		   cver ? cver : "", asked, chosen);

	char *instructions = sb_mcp_instructions(s->cfg);
	r->result = json_pack("{s:s, s:{s:{s:b}, s:{}}, s:o}", "protocolVersion", chosen, "capabilities", "tools",
			      "listChanged", 0, "logging", "serverInfo", server_info(chosen));
	if (instructions)
		json_object_set_new(r->result, "instructions", json_string(instructions));
	free(instructions);
}

static void h_ping(struct sb_mcp *s, const json_t *params, struct reply *r)
{
	r->result = json_object();
}

static void h_tools_list(struct sb_mcp *s, const json_t *params, struct reply *r)
{
	json_t *cursor = json_object_get(params, "cursor");
	if (cursor && !json_is_null(cursor)) {
		/* One page, so no cursor was ever handed out. */
		fail(r, SB_RPC_INVALID_PARAMS, "Invalid params: unknown cursor (the tool list has one page)");
		return;
	}
	r->result = sb_tools_list(s->cfg, sb_mcp_version(s));
}

static void h_set_level(struct sb_mcp *s, const json_t *params, struct reply *r)
{
	int level = sb_log_level_parse(json_string_value(json_object_get(params, "level")));
	if (level < 0) {
		fail(r, SB_RPC_INVALID_PARAMS,
		     "Invalid params: \"level\" must be one of debug, info, notice, warning, error, critical, "
		     "alert, emergency");
		return;
	}
	pthread_mutex_lock(&s->lock);
	s->log_level = (enum sb_log_level)level;
	pthread_mutex_unlock(&s->lock);
	r->result = json_object();
}

static void h_tools_call(struct sb_mcp *s, const json_t *id, const json_t *params, struct reply *r)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	if (!name) {
		fail(r, SB_RPC_INVALID_PARAMS, "Invalid params: tools/call needs \"name\" (a string)");
		return;
	}
	const struct sb_tool *t = sb_tool_find(name);
	if (!t) {
		fail(r, SB_RPC_INVALID_PARAMS,
		     "Unknown tool: %.100s (the tools are run_sagemath, run_python, run_shell, sandbox_status, "
		     "sandbox_self_test)",
		     name);
		return;
	}
	json_t *args = json_object_get(params, "arguments");
	if (json_is_null(args))
		args = NULL;
	if (sb_tool_check_args(t, args, s->cfg, NULL, r->msg, sizeof r->msg) < 0) {
		r->code = SB_RPC_INVALID_PARAMS;
		return;
	}
	json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
	if (token && !sb_rpc_id_valid(token))
		token = NULL; /* a progress token is a string or an integer */

	switch (sb_calls_start(s->calls, id, t, args, token)) {
	case SB_CALL_STARTED:
		r->deferred = true;
		break;
	case SB_CALL_DUPLICATE_ID:
		fail(r, SB_RPC_INVALID_REQUEST, "Invalid Request: a request with this id is still in flight");
		break;
	case SB_CALL_BUSY:
		r->result = sb_tool_text_result(
			"Too many calls are waiting or running at once; wait for their results before calling again.",
			true);
		break;
	case SB_CALL_FAILED:
	default:
		fail(r, SB_RPC_INTERNAL_ERROR, "Internal error: could not start the call (out of memory or threads)");
		break;
	}
}

static void handle_request(struct sb_mcp *s, const struct sb_rpc_msg *m)
{
	static const char *const known[] = {"initialize", "ping", "tools/list", "tools/call", "logging/setLevel"};
	struct reply r = {0};
	size_t which = 0;
	while (which < sizeof known / sizeof *known && strcmp(m->method, known[which]))
		which++;

	pthread_mutex_lock(&s->lock);
	bool ready = s->initialized;
	pthread_mutex_unlock(&s->lock);

	if (which == sizeof known / sizeof *known)
		fail(&r, SB_RPC_METHOD_NOT_FOUND, "Method not found: %.100s", m->method);
	else if (!ready && which > 1)
		fail(&r, SB_RPC_INVALID_REQUEST,
		     "Invalid Request: the server is not initialized; send initialize first (only ping is "
		     "allowed before it)");
	else if (which == 0)
		h_initialize(s, m->params, &r);
	else if (which == 1)
		h_ping(s, m->params, &r);
	else if (which == 2)
		h_tools_list(s, m->params, &r);
	else if (which == 3)
		h_tools_call(s, m->id, m->params, &r);
	else
		h_set_level(s, m->params, &r);

	if (r.deferred)
		return;
	if (r.code) {
		json_decref(r.result);
		sb_mcp_log(s, SB_LOG_DEBUG, "%.64s: error %d: %s", m->method, r.code, r.msg);
		sb_mcp_send(s, sb_rpc_error(m->id, r.code, r.msg, NULL));
	} else {
		sb_mcp_send(s, sb_rpc_result(m->id, r.result));
		if (!strcmp(m->method, "initialize")) {
			pthread_mutex_lock(&s->lock);
			s->answered = true;
			pthread_mutex_unlock(&s->lock);
		}
	}
}

static void handle_notification(struct sb_mcp *s, const struct sb_rpc_msg *m)
{
	if (!strcmp(m->method, "notifications/initialized")) {
		pthread_mutex_lock(&s->lock);
		bool ok = s->initialized;
		if (ok)
			s->client_ready = true;
		pthread_mutex_unlock(&s->lock);
		if (!ok)
			sb_mcp_log(s, SB_LOG_WARNING, "notifications/initialized before initialize: ignored");
	} else if (!strcmp(m->method, "notifications/cancelled")) {
		json_t *id = json_object_get(m->params, "requestId");
		if (sb_rpc_id_valid(id))
			sb_calls_cancel(s->calls, id, json_string_value(json_object_get(m->params, "reason")));
	} else {
		/* Notifications are never answered, not even unknown ones. */
		sb_mcp_log(s, SB_LOG_DEBUG, "notification %.100s ignored", m->method);
	}
}

void sb_mcp_handle_message(struct sb_mcp *s, const char *data, size_t len)
{
	struct sb_rpc_msg m;
	sb_rpc_parse(data, len, &m);
	switch (m.kind) {
	case SB_RPC_REQUEST:
		handle_request(s, &m);
		break;
	case SB_RPC_NOTIFICATION:
		handle_notification(s, &m);
		break;
	case SB_RPC_RESPONSE:
		sb_mcp_log(s, SB_LOG_DEBUG, "a response arrived, but the server sends no requests: ignored");
		break;
	case SB_RPC_INVALID:
		sb_mcp_log(s, SB_LOG_WARNING, "%s", m.err_msg);
		sb_mcp_send(s, sb_rpc_error(m.id, m.err_code, m.err_msg, NULL));
		break;
	}
	sb_rpc_msg_free(&m);
}

void sb_mcp_handle_oversize(struct sb_mcp *s, size_t len, size_t max, const json_t *id)
{
	char msg[256];
	snprintf(msg, sizeof msg, "Invalid Request: the message is %zu bytes long; the limit is %zu bytes", len, max);
	sb_mcp_log(s, SB_LOG_WARNING, "%s", msg);
	sb_mcp_send(s, sb_rpc_error(id, SB_RPC_INVALID_REQUEST, msg, NULL));
}
