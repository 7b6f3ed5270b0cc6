#include "mcp/jsonrpc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mcp/idscan.h"
#include "util/jsontext.h"
#include "util/utf8.h"

__attribute__((format(printf, 3, 4))) static void invalid(struct sb_rpc_msg *m, int code, const char *fmt, ...)
{
	va_list ap;
	m->kind = SB_RPC_INVALID;
	m->err_code = code;
	va_start(ap, fmt);
	vsnprintf(m->err_msg, sizeof m->err_msg, fmt, ap);
	va_end(ap);
}

bool sb_rpc_id_valid(const json_t *id)
{
	return id && (json_is_string(id) || json_is_integer(id));
}

static void set_id(struct sb_rpc_msg *m, json_t *id)
{
	json_decref(m->id);
	m->id = json_incref(id);
}

/* A message that cannot be parsed is still answered with its request's id
 * when that can be found: else the client waits for it until its timeout
 * (an offset of 2^63, 1e999 or a repeated key got "id": null). */
static json_t *scan_id(const char *line, size_t len)
{
	struct sb_idscan scan;
	sb_idscan_init(&scan);
	sb_idscan_feed(&scan, line, len);
	return sb_idscan_id(&scan);
}

void sb_rpc_parse(const char *line, size_t len, struct sb_rpc_msg *m)
{
	memset(m, 0, sizeof *m);

	size_t bad = 0;
	if (!sb_utf8_valid(line, len, &bad)) {
		/* JSON text is UTF-8 (RFC 8259 section 8.1). */
		m->id = scan_id(line, len);
		invalid(m, SB_RPC_PARSE_ERROR, "Parse error: the message is not valid UTF-8 (byte %zu)", bad);
		return;
	}

	json_error_t e;
	/* DECODE_ANY: a bare scalar is valid JSON, and so "not a request"
	 * (-32600), not a parse error. ALLOW_NUL: code may contain \u0000 (strings read
	 * as text, such as the method, go through sb_json_text, which refuses it).
	 * REJECT_DUPLICATES: {"name":"a","name":"b"} must not mean one thing
	 * to a client's log and another to us. */
	m->root = json_loadb(line, len, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &e);
	if (!m->root) {
		/* (an integer past 64 bits, 1e999, a repeated key) */
		m->id = scan_id(line, len);
		invalid(m, SB_RPC_PARSE_ERROR, "Parse error: %s (column %d)", e.text, e.column);
		return;
	}
	if (json_is_array(m->root)) {
		invalid(m, SB_RPC_INVALID_REQUEST,
			"Invalid Request: batches (JSON arrays) are not supported; MCP removed JSON-RPC "
			"batching in 2025-06-18. Send one message per line.");
		return;
	}
	if (!json_is_object(m->root)) {
		invalid(m, SB_RPC_INVALID_REQUEST, "Invalid Request: a message must be a JSON object");
		return;
	}

	json_t *id = json_object_get(m->root, "id");
	if (id && !sb_rpc_id_valid(id)) {
		invalid(m, SB_RPC_INVALID_REQUEST, "Invalid Request: %s",
			json_is_null(id) ? "the id must not be null (MCP requires a string or integer id)"
					 : "the id must be a string or an integer");
		return;
	}
	if (id)
		set_id(m, id);

	const char *version = sb_json_text(json_object_get(m->root, "jsonrpc"));
	if (!version || strcmp(version, "2.0")) {
		invalid(m, SB_RPC_INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
		return;
	}

	json_t *method = json_object_get(m->root, "method");
	if (!method) {
		if (id && (json_object_get(m->root, "result") || json_object_get(m->root, "error"))) {
			m->kind = SB_RPC_RESPONSE;
			return;
		}
		invalid(m, SB_RPC_INVALID_REQUEST, "Invalid Request: \"method\" is missing");
		return;
	}
	if (!json_is_string(method) || json_string_length(method) == 0) {
		invalid(m, SB_RPC_INVALID_REQUEST, "Invalid Request: \"method\" must be a non-empty string");
		return;
	}
	if (sb_json_has_nul(method)) {
		/* "ping\u0000x" is not ping. */
		invalid(m, SB_RPC_INVALID_REQUEST,
			"Invalid Request: \"method\" contains a NUL character (\\u0000); method names are plain text");
		return;
	}
	m->method = json_string_value(method);

	json_t *params = json_object_get(m->root, "params");
	if (params && !json_is_null(params) && !json_is_object(params)) {
		if (json_is_array(params))
			invalid(m, id ? SB_RPC_INVALID_PARAMS : SB_RPC_INVALID_REQUEST,
				"Invalid params: MCP params must be an object, not an array");
		else
			invalid(m, SB_RPC_INVALID_REQUEST, "Invalid Request: \"params\" must be an object");
		return;
	}
	m->params = json_is_object(params) ? params : NULL;
	m->kind = id ? SB_RPC_REQUEST : SB_RPC_NOTIFICATION;
}

void sb_rpc_msg_free(struct sb_rpc_msg *m)
{
	json_decref(m->root);
	json_decref(m->id);
	memset(m, 0, sizeof *m);
}

json_t *sb_rpc_string(const char *s)
{
	size_t len = strlen(s), bad = len;
	sb_utf8_valid(s, len, &bad);
	return json_stringn(s, bad);
}

static json_t *id_or_null(const json_t *id)
{
	return id ? json_deep_copy(id) : json_null();
}

json_t *sb_rpc_result(const json_t *id, json_t *result)
{
	json_t *o = json_object();
	json_object_set_new(o, "jsonrpc", json_string("2.0"));
	json_object_set_new(o, "id", id_or_null(id));
	json_object_set_new(o, "result", result ? result : json_object());
	return o;
}

json_t *sb_rpc_error(const json_t *id, int code, const char *message, json_t *data)
{
	json_t *err = json_object();
	json_object_set_new(err, "code", json_integer(code));
	/* Messages may quote what the client sent; never let that make the
	 * answer itself unserialisable. */
	json_object_set_new(err, "message", sb_rpc_string(message));
	if (data)
		json_object_set_new(err, "data", data);
	json_t *o = json_object();
	json_object_set_new(o, "jsonrpc", json_string("2.0"));
	json_object_set_new(o, "id", id_or_null(id));
	json_object_set_new(o, "error", err);
	return o;
}

json_t *sb_rpc_notification(const char *method, json_t *params)
{
	json_t *o = json_object();
	json_object_set_new(o, "jsonrpc", json_string("2.0"));
	json_object_set_new(o, "method", json_string(method));
	if (params)
		json_object_set_new(o, "params", params);
	return o;
}
