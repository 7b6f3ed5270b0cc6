/* The MCP server: everything between "one JSON-RPC message arrived" and "send
 * this JSON-RPC message". It knows nothing of how bytes travel (that is
 * transport/) nor of how code runs (that is runner/). */
#ifndef SAGEBOX_MCP_H
#define SAGEBOX_MCP_H

#include <jansson.h>
#include <stddef.h>

#include "config/config.h"
#include "runner/runner.h"
#include "util/error.h"

struct sb_mcp;
struct sb_audit;

/* How the server sends a message: called from any thread, must write the
 * whole message atomically. Returns 0, or -1 when the peer is gone. */
struct sb_mcp_sink {
	int (*send)(void *ctx, const json_t *msg);
	void *ctx;
};

/* runner may be NULL when it could not be created: runner_err then says why,
 * and the tools answer with that instead of running code. audit may be NULL. */
struct sb_mcp *sb_mcp_new(const struct sb_config *cfg, struct sb_runner *runner,
			  const struct sb_error *runner_err, struct sb_audit *audit,
			  const struct sb_mcp_sink *sink);

/* One message from the client (a line without its newline). Answers
 * whatever can be answered at once; tools/call runs on its own thread. */
void sb_mcp_handle_message(struct sb_mcp *s, const char *data, size_t len);

/* A message the transport refused to keep because it is longer than max
 * bytes. id: the request id found in it, or NULL. */
void sb_mcp_handle_oversize(struct sb_mcp *s, size_t len, size_t max, const json_t *id);

/* Housekeeping between messages (joins finished call threads). */
void sb_mcp_idle(struct sb_mcp *s);

/* Cancel every call (killing its sandbox), wait for their threads. */
void sb_mcp_shutdown(struct sb_mcp *s);
void sb_mcp_free(struct sb_mcp *s);

#endif
