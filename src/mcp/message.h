/* One message from a transport, parsed once: its JSON-RPC shape
 * (jsonrpc.h) and its era, decided here and nowhere else. A transport may
 * route on it (HTTP: which client or session answers) before handing it
 * to sb_mcp_handle_parsed (mcp.h).
 *
 * The era: a message is of the 2026-07-28 era ("modern") when its params'
 * _meta names a protocolVersion that is not a legacy revision, when it
 * names none but the transport's version header (HTTP:
 * MCP-Protocol-Version) names no legacy revision, or when it is
 * server/discover; otherwise it is of the handshake era (its revision was
 * agreed on with initialize). */
#ifndef SAGEBOX_MCP_MESSAGE_H
#define SAGEBOX_MCP_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "mcp/jsonrpc.h"

struct sb_mcp_message {
	struct sb_rpc_msg rpc;         /* rpc.root: the parsed JSON (NULL when it did not parse) */
	bool modern;                   /* of the 2026-07-28 era */
};

/* Parse and classify data. version_header: the transport's protocol
 * version header, or NULL (stdio has none). Never fails: see sb_rpc_parse. */
void sb_mcp_message_parse(const char *data, size_t len, const char *version_header, struct sb_mcp_message *m);
void sb_mcp_message_free(struct sb_mcp_message *m);

#endif
