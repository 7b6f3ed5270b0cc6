/* One message from a client, as the protocol layer handles it: with the
 * sink its answer goes to and its own view of the protocol revision. In the
 * handshake era the revision is the client's negotiated one; a revision
 * without a handshake (2026-07-28) carries it, and the client's
 * capabilities, in each request's _meta. */
#ifndef SAGEBOX_MCP_REQUEST_H
#define SAGEBOX_MCP_REQUEST_H

#include <jansson.h>
#include <stdbool.h>

#include "mcp/client.h"

struct sb_mcp_request {
	struct sb_mcp_client *client;
	const json_t *id;             /* NULL for a notification */
	const char *method;
	const json_t *params;         /* NULL when absent */
	const char *revision;         /* static string; NULL before a handshake */
	const json_t *capabilities;   /* the client's, for this request (may be NULL) */
	struct sb_mcp_sink reply;     /* where the answer and the request's progress go */
	bool modern;                  /* 2026-07-28 era: revision and capabilities from _meta */
	int log_level;                /* the threshold for log messages on reply, or -1 (none): modern:
					 the _meta logLevel; stream_logs: the client's level */
	bool stream_logs;             /* log messages about it go to reply (see sb_mcp_msg_opts) */
	const char *info;             /* modern: clientInfo from _meta; legacy: NULL (the client's) */
	const void *id_scope;         /* non-NULL: ids are scoped to this reply stream */
};

#endif
