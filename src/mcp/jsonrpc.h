/* JSON-RPC 2.0 as MCP uses it: one message per line, no batches (removed in
 * MCP 2025-06-18), ids are strings or integers and never null. This file
 * only classifies a message and builds answers; what a method does is the
 * protocol layer's business. */
#ifndef SAGEBOX_MCP_JSONRPC_H
#define SAGEBOX_MCP_JSONRPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define SB_RPC_PARSE_ERROR -32700
#define SB_RPC_INVALID_REQUEST -32600
#define SB_RPC_METHOD_NOT_FOUND -32601
#define SB_RPC_INVALID_PARAMS -32602
#define SB_RPC_INTERNAL_ERROR -32603
/* The server's own (-32000..-32019 are the implementation's): what a
 * request names is not held here. Over HTTP the handshake era's "Session
 * not found" (404), and a handle of another instance, which ended with it. */
#define SB_RPC_HANDLE_GONE -32001
/* Defined by MCP 2026-07-28 (the sub-range -32020..-32099 is the spec's). */
#define SB_RPC_HEADER_MISMATCH -32020
#define SB_RPC_MISSING_CAPABILITY -32021
#define SB_RPC_UNSUPPORTED_VERSION -32022

enum sb_rpc_kind {
	SB_RPC_REQUEST,      /* method and id: answer exactly once */
	SB_RPC_NOTIFICATION, /* method, no id: never answered */
	SB_RPC_RESPONSE,     /* result or error: the server sends no requests, so ignored */
	SB_RPC_INVALID,      /* answer with err_code/err_msg and id (JSON null when unknown) */
};

struct sb_rpc_msg {
	enum sb_rpc_kind kind;
	json_t *root;       /* the whole message (owned), NULL when it did not parse */
	json_t *id;         /* owned reference: the request's id; for INVALID the id to answer */
	const char *method; /* borrowed from root */
	json_t *params;     /* borrowed from root; NULL when absent or null */
	int err_code;
	char err_msg[512];
};

/* Classify one line (without its newline). Never fails: a message that is
 * not a valid request comes back as SB_RPC_INVALID with the reason. */
void sb_rpc_parse(const char *line, size_t len, struct sb_rpc_msg *m);
void sb_rpc_msg_free(struct sb_rpc_msg *m);

/* An MCP request id: a string or an integer. */
bool sb_rpc_id_valid(const json_t *id);

/* A JSON string of s, cut before the first byte that is not UTF-8 (a
 * message that quotes client input with %.100s may end mid-character). */
json_t *sb_rpc_string(const char *s);

/* New references; `result`, `data` and `params` are stolen, `id` is not
 * (NULL means JSON null). */
json_t *sb_rpc_result(const json_t *id, json_t *result);
json_t *sb_rpc_error(const json_t *id, int code, const char *message, json_t *data);
json_t *sb_rpc_notification(const char *method, json_t *params);

#endif
