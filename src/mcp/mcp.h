/* The MCP server: everything between "a JSON-RPC message arrived from a
 * client" and "send this JSON-RPC message to it". It knows nothing of how
 * bytes travel (that is transport/) nor of what a tool does (tools/) or how
 * code runs (runner/).
 *
 *   server   one per process: the tool table, the runner, the settings,
 *            the audit log and the job slots, shared by every client;
 *   client   one per connection (stdio: the one peer; HTTP: one per token
 *            or session): its owner id, the protocol revision and
 *            capabilities of the handshake era, its log level, its calls
 *            in flight;
 *   request  one message from a client with its reply sink (stdio: the
 *            output stream; HTTP: that POST's response or SSE stream) and
 *            its own view of the protocol revision.
 *
 * A transport creates clients and hands each message over with the sink its
 * answer must go to. */
#ifndef SAGEBOX_MCP_H
#define SAGEBOX_MCP_H

#include <jansson.h>
#include <stddef.h>

#include "config/config.h"
#include "runner/runner.h"
#include "util/error.h"

struct sb_mcp_server;
struct sb_mcp_client;
struct sb_audit;

/* Where messages go. send may be called from any thread and must write the
 * whole message atomically; it returns 0, or -1 when the peer is gone.
 * done (may be NULL) is called exactly once per handled message, after the
 * last message sent for it (its response, or nothing for a notification or
 * a cancelled call): an HTTP transport then ends that POST's response. */
struct sb_mcp_sink {
	int (*send)(void *ctx, const json_t *msg);
	void (*done)(void *ctx);
	void *ctx;
};

/* runner may be NULL when it could not be created: runner_err then says why,
 * and the tools answer with that instead of running code. audit may be NULL.
 * cfg, runner and audit must outlive the server. */
struct sb_mcp_server *sb_mcp_server_new(const struct sb_config *cfg, struct sb_runner *runner,
					const struct sb_error *runner_err, struct sb_audit *audit);
void sb_mcp_server_free(struct sb_mcp_server *s);

/* A client. owner: the identity its sessions, jobs and audit lines are
 * keyed by ("stdio", or an HTTP token's name). notify: where messages that
 * answer no request go (log notifications); it must outlive the client. */
struct sb_mcp_client *sb_mcp_client_new(struct sb_mcp_server *s, const char *owner,
					const struct sb_mcp_sink *notify);
/* Cancel the client's calls (killing their sandboxes), join their threads, free. */
void sb_mcp_client_free(struct sb_mcp_client *c);

/* One message from the client (without its line end). Answers whatever can
 * be answered at once; tools/call runs on its own thread and answers later.
 * reply is copied; its ctx must stay valid until reply->done is called. */
void sb_mcp_handle_message(struct sb_mcp_client *c, const char *data, size_t len, const struct sb_mcp_sink *reply);

/* A message the transport refused to keep because it is longer than max
 * bytes. id: the request id found in it, or NULL. */
void sb_mcp_handle_oversize(struct sb_mcp_client *c, size_t len, size_t max, const json_t *id,
			    const struct sb_mcp_sink *reply);

/* Cancel the client's request with this id, as notifications/cancelled
 * would (an HTTP transport calls it when a request's stream closes early):
 * its sandbox is killed and it gets no response. Unknown ids are ignored. */
void sb_mcp_client_cancel(struct sb_mcp_client *c, const json_t *id, const char *reason);

/* Housekeeping between messages (joins finished call threads). */
void sb_mcp_client_idle(struct sb_mcp_client *c);

#endif
