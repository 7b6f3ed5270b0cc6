/* Fuzz target: JSON-RPC classification of one message (mcp/jsonrpc.c), its era (mcp/message.c) and
 * the streaming id scanner (mcp/idscan.c) that finds the id of a message
 * too long or not UTF-8 enough to parse.
 *
 * Checked beyond "no crash, no leak, no undefined behaviour":
 * - a request or notification has a method without NUL, an id that is a
 *   string or an integer (requests) and params that are an object or absent;
 * - an invalid message has a JSON-RPC error code and a message, and the
 *   error answer built from it can be serialised (a client is never left
 *   waiting because the answer could not be written);
 * - the scanner gives the same id whatever the chunking of the bytes, and
 *   never an id other than the one the parsed message holds;
 * - a message that does not parse is answered with the scanner's id;
 * - the classify-and-parse step of mcp/message.c gives the same message,
 *   and its era follows its rule: a legacy version header never makes a
 *   message modern, a modern one makes every message modern that names no
 *   revision of its own, and server/discover is always modern. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/idscan.h"
#include "mcp/jsonrpc.h"
#include "mcp/message.h"
#include "util/jsontext.h"

static json_t *scan(const uint8_t *data, size_t size, size_t piece)
{
	struct sb_idscan s;
	sb_idscan_init(&s);
	for (size_t off = 0; off < size; off += piece)
		sb_idscan_feed(&s, (const char *)data + off, size - off < piece ? size - off : piece);
	return sb_idscan_id(&s);
}

static void check_answer(const json_t *id, int code, const char *msg)
{
	json_t *e = sb_rpc_error(id, code, msg, NULL);
	char *text = json_dumps(e, JSON_COMPACT);
	if (!text)
		abort();
	free(text);
	json_decref(e);
}

static bool era(const char *data, size_t size, const char *header, const struct sb_rpc_msg *m)
{
	struct sb_mcp_message mm;
	sb_mcp_message_parse(data, size, header, &mm);
	if (mm.rpc.kind != m->kind || !json_equal(mm.rpc.root, m->root) != !m->root || mm.rpc.err_code != m->err_code)
		abort();
	bool modern = mm.modern;
	sb_mcp_message_free(&mm);
	return modern;
}

static void check_era(const char *data, size_t size, const struct sb_rpc_msg *m)
{
	bool none = era(data, size, NULL, m), legacy = era(data, size, "2025-06-18", m);
	bool modern = era(data, size, "2026-07-28", m);
	const json_t *meta = json_object_get(json_object_get(m->root, "params"), "_meta");
	bool named = json_object_get(meta, "io.modelcontextprotocol/protocolVersion") != NULL;
	const char *method = sb_json_text(json_object_get(m->root, "method"));
	if (none != legacy || (!named && !modern) || (named && modern != none))
		abort();
	if (method && !strcmp(method, "server/discover") && !(none && legacy && modern))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_rpc_msg m;
	sb_rpc_parse((const char *)data, size, &m);
	switch (m.kind) {
	case SB_RPC_REQUEST:
	case SB_RPC_NOTIFICATION:
		if (!m.method || !*m.method || strlen(m.method) != json_string_length(json_object_get(m.root, "method")))
			abort();
		if ((m.kind == SB_RPC_REQUEST) != (m.id != NULL) || (m.id && !sb_rpc_id_valid(m.id)))
			abort();
		if (m.params && !json_is_object(m.params))
			abort();
		break;
	case SB_RPC_RESPONSE:
		if (!sb_rpc_id_valid(m.id))
			abort();
		break;
	case SB_RPC_INVALID:
		if (m.err_code > -32600 || m.err_code < -32700 || !m.err_msg[0] || (m.id && !sb_rpc_id_valid(m.id)))
			abort();
		check_answer(m.id, m.err_code, m.err_msg);
		break;
	default:
		abort();
	}

	json_t *whole = scan(data, size, size ? size : 1);
	json_t *bytes = scan(data, size, 1);
	json_t *some = scan(data, size, size ? (size_t)data[0] % 7 + 1 : 1);
	if (!whole != !bytes || !whole != !some || (whole && (!json_equal(whole, bytes) || !json_equal(whole, some))))
		abort();
	if (whole && !sb_rpc_id_valid(whole))
		abort();
	json_t *parsed = json_is_object(m.root) ? json_object_get(m.root, "id") : NULL;
	if (whole && json_is_object(m.root) && !json_equal(whole, parsed))
		abort();
	/* A message that does not parse is answered with the id the scanner
	 * finds, if any. */
	if (m.kind == SB_RPC_INVALID && m.err_code == SB_RPC_PARSE_ERROR && (!whole != !m.id || (whole && !json_equal(whole, m.id))))
		abort();
	json_decref(whole);
	json_decref(bytes);
	json_decref(some);
	check_era((const char *)data, size, &m);
	sb_rpc_msg_free(&m);
	return 0;
}
