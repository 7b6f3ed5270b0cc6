/* One message from a client, as the protocol layer handles it: with the
 * sink its answer goes to and its own view of the protocol revision. In the
 * handshake era the revision is the client's negotiated one; a revision
 * without a handshake (2026-07-28) carries it, and the client's
 * capabilities, in each request's _meta. */
#ifndef SAGEBOX_MCP_REQUEST_H
#define SAGEBOX_MCP_REQUEST_H

#include <jansson.h>

#include "mcp/client.h"

struct sb_mcp_request {
	struct sb_mcp_client *client;
	const json_t *id;             /* NULL for a notification */
	const char *method;
	const json_t *params;         /* NULL when absent */
	const char *revision;         /* static string; NULL before a handshake */
	const json_t *capabilities;   /* the client's, for this request (may be NULL) */
	struct sb_mcp_sink reply;     /* where the answer and the request's progress go */
};

#endif
