/* The MCP methods and the dispatch of one client's messages: initialize
 * (version negotiation), ping, tools/list, tools/call, resources/list,
 * resources/templates/list and resources/read (mcp/resources.h),
 * logging/setLevel, server/discover, and the notifications initialized and
 * cancelled.
 *
 * Each request is of one of two eras. A request whose _meta names a
 * protocol revision of 2026-07-28 or later (or server/discover, or one the
 * transport marks) is served on its own, with the revision, capabilities
 * and log level of its _meta; every other request is of the handshake era:
 * requests other than initialize and ping before initialize, and a second
 * initialize, are answered with errors. Each method says in which era it
 * exists (initialize, ping and logging/setLevel were removed in 2026-07-28).
 * What a tool does is the tools layer's: this file only finds the row,
 * checks the arguments with it and hands the call on. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/calls.h"
#include "mcp/jsonrpc.h"
#include "mcp/message.h"
#include "mcp/request.h"
#include "mcp/resources.h"
#include "mcp/revision.h"
#include "mcp/server.h"
#include "mcp/stateless.h"
#include "mcp/tasks.h"
#include "mcp/toolview.h"
#include "tools/version.h"
#include "util/jsontext.h"
#include "util/utf8.h"

/* What a method handler produced. */
struct reply {
	json_t *result;       /* the result (owned), or NULL with an error set */
	int code;             /* 0, or a JSON-RPC error code */
	char msg[768];
	bool deferred;        /* a call thread will answer (tools/call) */
	bool opens_session;   /* initialize: notifications may flow once it is sent */
	json_t *data;         /* the error's data (owned), or NULL */
};

__attribute__((format(printf, 3, 4))) static void fail(struct reply *r, int code, const char *fmt, ...)
{
	va_list ap;
	r->code = code;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
}

/* A string the server reads as text must not hide a NUL (\u0000) that
 * would make "ping\u0000x" pass for "ping". Returns true (and fails r) if v has one. */
static bool has_nul(struct reply *r, const json_t *v, const char *what)
{
	if (!sb_json_has_nul(v))
		return false;
	fail(r, SB_RPC_INVALID_PARAMS, "Invalid params: %s contains a NUL character (\\u0000), which is not allowed there",
	     what);
	return true;
}

/* "name version" of clientInfo, cut at a character boundary. */
static void client_info(const json_t *info, const char **name, char *buf, size_t size)
{
	*name = sb_json_text(json_object_get(info, "name"));
	const char *ver = sb_json_text(json_object_get(info, "version"));
	char *full = NULL;
	if (asprintf(&full, "%s%s%s", *name ? *name : "", *name && ver ? " " : "", ver ? ver : "") < 0)
		full = NULL;
	size_t n = full ? sb_utf8_prefix(full, strlen(full), size - 1) : 0;
	memcpy(buf, full ? full : "", n);
	buf[n] = '\0';
	free(full);
}

static void h_initialize(const struct sb_mcp_request *q, struct reply *r)
{
	struct sb_mcp_client *c = q->client;
	json_t *asked_v = json_object_get(q->params, "protocolVersion");
	json_t *info = json_object_get(q->params, "clientInfo");
	if (has_nul(r, asked_v, "\"protocolVersion\"") ||
	    has_nul(r, json_object_get(info, "name"), "\"clientInfo.name\"") ||
	    has_nul(r, json_object_get(info, "version"), "\"clientInfo.version\""))
		return;
	const char *asked = json_string_value(asked_v);
	if (!asked) {
		fail(r, SB_RPC_INVALID_PARAMS, "Invalid params: initialize needs \"protocolVersion\" (a string)");
		return;
	}
	json_t *caps = json_object_get(q->params, "capabilities");
	if (caps && !json_is_object(caps)) {
		fail(r, SB_RPC_INVALID_PARAMS, "Invalid params: \"capabilities\" must be an object");
		return;
	}
	const char *chosen = sb_rev_negotiate(asked);
	const char *cname;
	char who[sizeof c->info];
	client_info(info, &cname, who, sizeof who);

	pthread_mutex_lock(&c->lock);
	bool again = c->initialized;
	if (!again) {
		c->initialized = true;
		c->revision = chosen;
		c->capabilities = caps ? json_deep_copy(caps) : json_object();
		memcpy(c->info, who, sizeof who);
	}
	pthread_mutex_unlock(&c->lock);
	if (again) {
		fail(r, SB_RPC_INVALID_REQUEST,
		     "Invalid Request: the session is already initialized; initialize may be sent only once");
		return;
	}
	const char *cver = sb_json_text(json_object_get(info, "version"));
	sb_mcp_log(c, SB_LOG_INFO, "client %s %s asked for protocol %.32s; using %s", cname ? cname : "(unnamed)",
		   cver ? cver : "", asked, chosen);

	char *instructions = sb_tools_instructions(c->srv->tools.cfg);
	r->result = json_pack("{s:s, s:{s:{s:b}, s:{}}, s:o}", "protocolVersion", chosen, "capabilities", "tools",
			      "listChanged", 0, "logging", "serverInfo", sb_mcp_server_info(chosen));
	if (instructions)
		json_object_set_new(r->result, "instructions", json_string(instructions));
	free(instructions);
	/* resources: session files, and the viewer for MCP Apps hosts. */
	json_object_set_new(json_object_get(r->result, "capabilities"), "resources", json_object());
	sb_ui_server_capability(json_object_get(r->result, "capabilities"), caps);
	if (sb_rev_tasks_core(chosen))
		json_object_set_new(json_object_get(r->result, "capabilities"), "tasks",
				    json_pack("{s:{}, s:{}, s:{s:{s:{}}}}", "list", "cancel", "requests", "tools", "call"));
	r->opens_session = true;
}

static void h_ping(const struct sb_mcp_request *q, struct reply *r)
{
	r->result = json_object();
}

static void h_tools_list(const struct sb_mcp_request *q, struct reply *r)
{
	json_t *cursor = json_object_get(q->params, "cursor");
	if (has_nul(r, cursor, "\"cursor\""))
		return;
	if (cursor && !json_is_null(cursor)) {
		/* One page, so no cursor was ever handed out. */
		fail(r, SB_RPC_INVALID_PARAMS, "Invalid params: unknown cursor (the tool list has one page)");
		return;
	}
	r->result = sb_mcp_tools_list(q->client->srv->tools.cfg, q->revision);
	sb_ui_link_tools(r->result, q->capabilities);
	sb_stateless_cache_hints(r->result, q->revision);
}

static void h_resources_list(const struct sb_mcp_request *q, struct reply *r)
{
	json_t *cursor = json_object_get(q->params, "cursor");
	if (cursor && !json_is_null(cursor)) {
		fail(r, SB_RPC_INVALID_PARAMS, "Invalid params: unknown cursor (the resource list has one page)");
		return;
	}
	r->result = sb_resources_list(q);
	sb_stateless_cache_hints(r->result, q->revision);
}

/* No URI templates (a session's files are linked from results, not
 * listed), but the method answers, with the same caching hints as its
 * neighbours: a server that declares resources has it. */
static void h_resource_templates_list(const struct sb_mcp_request *q, struct reply *r)
{
	json_t *cursor = json_object_get(q->params, "cursor");
	if (cursor && !json_is_null(cursor)) {
		fail(r, SB_RPC_INVALID_PARAMS, "Invalid params: unknown cursor (the template list has one page)");
		return;
	}
	r->result = json_pack("{s:[]}", "resourceTemplates");
	sb_stateless_cache_hints(r->result, q->revision);
}

static void h_resources_read(const struct sb_mcp_request *q, struct reply *r)
{
	r->result = sb_resources_read(q, &r->code, r->msg, sizeof r->msg);
}

static void h_discover(const struct sb_mcp_request *q, struct reply *r)
{
	r->result = sb_mcp_discover(q->client->srv->tools.cfg, q->revision);
	sb_ui_server_capability(json_object_get(r->result, "capabilities"), q->capabilities);
}

static void h_set_level(const struct sb_mcp_request *q, struct reply *r)
{
	json_t *level_v = json_object_get(q->params, "level");
	if (has_nul(r, level_v, "\"level\""))
		return;
	int level = sb_log_level_parse(json_string_value(level_v));
	if (level < 0) {
		fail(r, SB_RPC_INVALID_PARAMS,
		     "Invalid params: \"level\" must be one of debug, info, notice, warning, error, critical, "
		     "alert, emergency");
		return;
	}
	pthread_mutex_lock(&q->client->lock);
	q->client->log_level = (enum sb_log_level)level;
	pthread_mutex_unlock(&q->client->lock);
	r->result = json_object();
}

static const struct sb_tool *find_tool(const json_t *name_v, struct reply *r)
{
	const char *name = json_string_value(name_v);
	if (!name) {
		fail(r, SB_RPC_INVALID_PARAMS, "Invalid params: tools/call needs \"name\" (a string)");
		return NULL;
	}
	const struct sb_tool *t = sb_json_has_nul(name_v) ? NULL : sb_tool_find(name);
	if (!t) {
		char *names = sb_tool_names();
		if (sb_json_has_nul(name_v))
			fail(r, SB_RPC_INVALID_PARAMS,
			     "Invalid params: the tool name contains a NUL character (\\u0000); the tools are %s",
			     names ? names : "?");
		else
			fail(r, SB_RPC_INVALID_PARAMS, "Unknown tool: %.100s (the tools are %s)", name,
			     names ? names : "?");
		free(names);
	}
	return t;
}

/* A task method's answer as this file's reply. */
static void take_task_reply(struct reply *r, struct sb_task_reply *tr)
{
	r->result = tr->result;
	r->code = tr->code;
	r->data = tr->data;
	r->deferred = tr->deferred;
	snprintf(r->msg, sizeof r->msg, "%s", tr->msg);
}

static void h_tools_call(const struct sb_mcp_request *q, struct reply *r)
{
	const struct sb_tool *t = find_tool(json_object_get(q->params, "name"), r);
	if (!t)
		return;
	if (t->app_only && !sb_ui_declared(q->capabilities)) {
		fail(r, SB_RPC_INVALID_PARAMS,
		     "%s is the sagebox viewer's tool: it is called by the viewer inside a host that renders MCP "
		     "Apps, and this client did not declare the %s extension (with %s) in its capabilities",
		     t->name, SB_UI_EXTENSION, SB_UI_MIME);
		return;
	}
	json_t *args = json_object_get(q->params, "arguments");
	if (json_is_null(args))
		args = NULL;
	bool task = (sb_rev_tasks_core(q->revision) && json_object_get(q->params, "task")) ||
		    (sb_tasks_ext(q) && t->task_support);
	if ((t->opens || task) && atomic_load(&q->client->srv->draining)) {
		/* A router sends new work to the other instances; this one only
		 * finishes what it has. */
		snprintf(r->msg, sizeof r->msg,
			 "This sagebox instance (%s) is shutting down and opens no new sessions, jobs or tasks; "
			 "call again: the router sends new work to another instance.",
			 sb_config_instance(q->client->srv->tools.cfg));
		r->result = sb_mcp_text_result(r->msg, true);
		sb_calls_count(t, "refused", "", 0);
		return;
	}
	if (sb_tool_check_args(t, args, r->msg, sizeof r->msg) < 0) {
		sb_calls_count(t, "refused", "", 0);
		/* From 2025-11-25 the model sees what to fix, as a tool error. */
		if (sb_rev_has(q->revision, SB_REV_ARG_ERROR_RESULT))
			r->result = sb_mcp_text_result(r->msg, true);
		else
			r->code = SB_RPC_INVALID_PARAMS;
		return;
	}
	json_t *token = json_object_get(json_object_get(q->params, "_meta"), "progressToken");
	if (has_nul(r, token, "\"_meta.progressToken\""))
		return;
	if (token && !sb_rpc_id_valid(token))
		token = NULL; /* a progress token is a string or an integer */
	/* A task: asked for (2025-11-25), or the server's choice for a client
	 * that takes them (2026-07-28: every call of a tool that allows it). */
	if (task) {
		struct sb_task_reply tr = {0};
		sb_tasks_call(q->client->srv->tasks, q, t, args, &tr);
		take_task_reply(r, &tr);
		return;
	}

	switch (sb_calls_start(q->client->calls, q, t, args, token)) {
	case SB_CALL_STARTED:
		r->deferred = true;
		break;
	case SB_CALL_DUPLICATE_ID:
		fail(r, SB_RPC_INVALID_REQUEST, "Invalid Request: a request with this id is still in flight");
		break;
	case SB_CALL_BUSY:
		sb_calls_count(t, "refused", "", 0);
		r->result = sb_mcp_text_result(
			"Too many calls are waiting or running at once; wait for their results before calling again.",
			true);
		break;
	case SB_CALL_FAILED:
	default:
		fail(r, SB_RPC_INTERNAL_ERROR, "Internal error: could not start the call (out of memory or threads)");
		break;
	}
}

/* tasks/get, tasks/result, tasks/list, tasks/cancel, tasks/update: in the
 * handshake era only from 2025-11-25 (2026-07-28: the extension's checks
 * are the tasks layer's). */
static void task_method(const struct sb_mcp_request *q, struct reply *r,
			void (*fn)(struct sb_tasks *, const struct sb_mcp_request *, struct sb_task_reply *))
{
	if (!q->modern && !sb_rev_tasks_core(q->revision)) {
		fail(r, SB_RPC_METHOD_NOT_FOUND, "Method not found: %.32s (tasks are part of protocol revision "
						 "2025-11-25; this session uses %s)", q->method, q->revision);
		return;
	}
	struct sb_task_reply tr = {0};
	fn(q->client->srv->tasks, q, &tr);
	take_task_reply(r, &tr);
}

static void h_tasks_get(const struct sb_mcp_request *q, struct reply *r)
{
	task_method(q, r, sb_tasks_get);
}

static void h_tasks_result(const struct sb_mcp_request *q, struct reply *r)
{
	task_method(q, r, sb_tasks_result);
}

static void h_tasks_list(const struct sb_mcp_request *q, struct reply *r)
{
	task_method(q, r, sb_tasks_list);
}

static void h_tasks_cancel(const struct sb_mcp_request *q, struct reply *r)
{
	task_method(q, r, sb_tasks_cancel);
}

static void h_tasks_update(const struct sb_mcp_request *q, struct reply *r)
{
	task_method(q, r, sb_tasks_update);
}

static void n_initialized(const struct sb_mcp_request *q, struct reply *r)
{
	struct sb_mcp_client *c = q->client;
	pthread_mutex_lock(&c->lock);
	bool ok = c->initialized;
	if (ok)
		c->client_ready = true;
	pthread_mutex_unlock(&c->lock);
	if (!ok)
		sb_mcp_log(c, SB_LOG_WARNING, "notifications/initialized before initialize: ignored");
}

static void n_cancelled(const struct sb_mcp_request *q, struct reply *r)
{
	json_t *id = json_object_get(q->params, "requestId");
	if (!sb_rpc_id_valid(id))
		return;
	sb_calls_cancel(q->client->calls, id, sb_json_text(json_object_get(q->params, "reason")));
	/* 2025-11-25: also the task that request created, or a tasks/result that waits
	 * (2026-07-28: a task is cancelled by tasks/cancel only). */
	if (!q->modern)
		sb_tasks_cancel_request(q->client->srv->tasks, q->client, id);
}

/* The eras a method exists in. */
enum { LEGACY = 1, MODERN = 2, BOTH = LEGACY | MODERN };

/* Every method, request or notification, as one table. */
static const struct method {
	const char *name;
	bool notification;     /* never answered */
	unsigned eras;         /* LEGACY, MODERN or both */
	bool before_handshake; /* legacy: allowed before initialize */
	void (*fn)(const struct sb_mcp_request *q, struct reply *r);
} methods[] = {
	{"initialize", false, LEGACY, true, h_initialize},
	{"ping", false, LEGACY, true, h_ping},
	{"server/discover", false, MODERN, false, h_discover},
	{"tools/list", false, BOTH, false, h_tools_list},
	{"tools/call", false, BOTH, false, h_tools_call},
	{"resources/list", false, BOTH, false, h_resources_list},
	{"resources/read", false, BOTH, false, h_resources_read},
	{"resources/templates/list", false, BOTH, false, h_resource_templates_list},
	{"logging/setLevel", false, LEGACY, false, h_set_level},
	{"tasks/get", false, BOTH, false, h_tasks_get},
	{"tasks/result", false, LEGACY, false, h_tasks_result},
	{"tasks/list", false, LEGACY, false, h_tasks_list},
	{"tasks/cancel", false, BOTH, false, h_tasks_cancel},
	{"tasks/update", false, MODERN, false, h_tasks_update},
	{"notifications/initialized", true, LEGACY, true, n_initialized},
	{"notifications/cancelled", true, BOTH, true, n_cancelled},
};

static const struct method *find_method(const char *name, bool notification, unsigned era)
{
	for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
		if (methods[i].notification == notification && (methods[i].eras & era) &&
		    !strcmp(name, methods[i].name))
			return &methods[i];
	return NULL;
}

/* The request as handled: its reply sink and, in the handshake era, the
 * client's revision and capabilities (a modern request takes them from its
 * _meta instead, in handle_request). */
static struct sb_mcp_request open_request(struct sb_mcp_client *c, const struct sb_rpc_msg *m,
					  const struct sb_mcp_sink *reply, const struct sb_mcp_msg_opts *o)
{
	struct sb_mcp_request q = {.client = c, .id = m->id, .method = m->method, .params = m->params,
				   .reply = *reply, .log_level = -1};
	if (o && o->stream_ids)
		q.id_scope = reply->ctx;
	pthread_mutex_lock(&c->lock);
	q.revision = c->revision;
	q.capabilities = c->capabilities;
	if (o && o->stream_logs) {
		q.stream_logs = true;
		q.log_level = c->answered ? (int)c->log_level : -1;
	}
	pthread_mutex_unlock(&c->lock);
	return q;
}

/* Log about a request: a modern one's log goes to its own stream only if
 * it asked; a legacy one's to the client. */
#define req_log(q, ...) \
	sb_mcp_log_routed((q)->client, (q)->modern || (q)->stream_logs, &(q)->reply, (q)->log_level, __VA_ARGS__)

/* Refuse a modern request before any method ran: the transport hears the
 * code first (HTTP: 400 or 404), then the error, then done. data is stolen. */
static void reject(const struct sb_mcp_request *q, int code, const char *msg, json_t *data)
{
	req_log(q, SB_LOG_DEBUG, "%.64s: refused: %d: %s", q->method, code, msg);
	if (q->reply.rejected)
		q->reply.rejected(q->reply.ctx, code);
	sb_mcp_send(&q->reply, sb_rpc_error(q->id, code, msg, data));
	sb_mcp_done(&q->reply);
}

static void handle_request(struct sb_mcp_client *c, const struct sb_rpc_msg *m, bool modern,
			   const struct sb_mcp_sink *reply, const struct sb_mcp_msg_opts *o)
{
	struct sb_mcp_request q = open_request(c, m, reply, o);
	const struct method *mt;
	struct reply r = {0};
	struct sb_meta meta;
	if (modern) {
		struct sb_meta_error e;
		q.modern = true;
		q.stream_logs = false;
		if (sb_meta_read(m->params, &meta, &e) < 0) {
			reject(&q, e.code, e.msg, e.data);
			return;
		}
		q.revision = meta.revision;
		q.capabilities = meta.capabilities;
		q.log_level = meta.log_level;
		q.info = meta.info;
		if (!(mt = find_method(m->method, false, MODERN))) {
			char msg[256];
			snprintf(msg, sizeof msg, "Method not found: %.100s (not a method of protocol revision %s)",
				 m->method, q.revision);
			reject(&q, SB_RPC_METHOD_NOT_FOUND, msg, NULL);
			return;
		}
		mt->fn(&q, &r);
	} else if (!(mt = find_method(m->method, false, LEGACY))) {
		fail(&r, SB_RPC_METHOD_NOT_FOUND, "Method not found: %.100s", m->method);
	} else if (!q.revision && !mt->before_handshake) {
		fail(&r, SB_RPC_INVALID_REQUEST,
		     "Invalid Request: the server is not initialized; send initialize first (only ping is "
		     "allowed before it), or send requests of protocol revision 2026-07-28 with their _meta");
	} else {
		mt->fn(&q, &r);
	}

	if (r.deferred)
		return; /* the call answers, and calls reply->done */
	if (r.code) {
		json_decref(r.result);
		req_log(&q, SB_LOG_DEBUG, "%.64s: error %d: %s", m->method, r.code, r.msg);
		sb_mcp_send(reply, sb_rpc_error(m->id, r.code, r.msg, r.data));
	} else {
		sb_stateless_stamp(r.result, q.revision);
		sb_mcp_send(reply, sb_rpc_result(m->id, r.result));
		if (r.opens_session) {
			pthread_mutex_lock(&c->lock);
			c->answered = true;
			pthread_mutex_unlock(&c->lock);
		}
	}
	sb_mcp_done(reply);
}

static void handle_notification(struct sb_mcp_client *c, const struct sb_rpc_msg *m, const struct sb_mcp_sink *reply,
				const struct sb_mcp_msg_opts *o)
{
	struct sb_mcp_request q = open_request(c, m, reply, o);
	const struct method *mt = find_method(m->method, true, BOTH);
	struct reply ignored = {0};
	if (mt)
		mt->fn(&q, &ignored);
	else /* Notifications are never answered, not even unknown ones. */
		sb_mcp_log(c, SB_LOG_DEBUG, "notification %.100s ignored", m->method);
	sb_mcp_done(reply);
}

void sb_mcp_handle_message(struct sb_mcp_client *c, const char *data, size_t len, const struct sb_mcp_sink *reply)
{
	sb_mcp_handle_message_opts(c, data, len, reply, NULL);
}

void sb_mcp_handle_message_opts(struct sb_mcp_client *c, const char *data, size_t len,
				const struct sb_mcp_sink *reply, const struct sb_mcp_msg_opts *o)
{
	struct sb_mcp_message m;
	sb_mcp_message_parse(data, len, NULL, &m);
	sb_mcp_handle_parsed(c, &m, reply, o);
	sb_mcp_message_free(&m);
}

void sb_mcp_handle_parsed(struct sb_mcp_client *c, const struct sb_mcp_message *msg, const struct sb_mcp_sink *reply,
			  const struct sb_mcp_msg_opts *o)
{
	const struct sb_rpc_msg *m = &msg->rpc;
	switch (m->kind) {
	case SB_RPC_REQUEST:
		handle_request(c, m, msg->modern, reply, o);
		break;
	case SB_RPC_NOTIFICATION:
		handle_notification(c, m, reply, o);
		break;
	case SB_RPC_RESPONSE:
		sb_mcp_log(c, SB_LOG_DEBUG, "a response arrived, but the server sends no requests: ignored");
		sb_mcp_done(reply);
		break;
	case SB_RPC_INVALID:
		sb_mcp_log(c, SB_LOG_WARNING, "%s", m->err_msg);
		sb_mcp_send(reply, sb_rpc_error(m->id, m->err_code, m->err_msg, NULL));
		sb_mcp_done(reply);
		break;
	}
}

void sb_mcp_handle_oversize(struct sb_mcp_client *c, size_t len, size_t max, const json_t *id,
			    const struct sb_mcp_sink *reply)
{
	char msg[256];
	snprintf(msg, sizeof msg, "Invalid Request: the message is %zu bytes long; the limit is %zu bytes", len, max);
	sb_mcp_log(c, SB_LOG_WARNING, "%s", msg);
	sb_mcp_send(reply, sb_rpc_error(id, SB_RPC_INVALID_REQUEST, msg, NULL));
	sb_mcp_done(reply);
}
