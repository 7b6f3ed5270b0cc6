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
#include <stdbool.h>
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
	/* rejected (may be NULL) is called, before the error is sent, when a
	 * request of the 2026-07-28 era is refused before any method ran (its
	 * _meta, its revision, an unknown method): code is the JSON-RPC error
	 * code, from which an HTTP transport takes its status (400, 404). */
	void (*rejected)(void *ctx, int code);
	void *ctx;
};

/* What a transport knows of a message beyond its bytes. */
struct sb_mcp_msg_opts {
	/* Request ids are scoped to this message's reply stream (HTTP: each
	 * POST is its own exchange), so two requests with the same id may be in
	 * flight on different streams; cancel such a call with
	 * sb_mcp_client_cancel_stream. */
	bool stream_ids;
	/* Log messages about a request go on its own reply stream, at the
	 * client's level (HTTP in the handshake era: there is no stream for
	 * messages that answer no request), instead of to the notify sink. */
	bool stream_logs;
};

/* runner may be NULL when it could not be created: runner_err then says why,
 * and the tools answer with that instead of running code. audit may be NULL.
 * cfg, runner and audit must outlive the server. */
struct sb_mcp_server *sb_mcp_server_new(const struct sb_config *cfg, struct sb_runner *runner,
					const struct sb_error *runner_err, struct sb_audit *audit);
void sb_mcp_server_free(struct sb_mcp_server *s);
/* How many owners (clients with their own identity) may call: with more
 * than one, no owner may hold every job slot (one stays free for the
 * others). The HTTP transport sets it to its number of tokens. */
void sb_mcp_server_set_clients(struct sb_mcp_server *s, unsigned n);

/* The server is draining (it will stop): from now on a call that would
 * open a session or start a background job or task gets an error result
 * saying so; everything already open goes on. */
void sb_mcp_server_drain(struct sb_mcp_server *s);

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
/* The same, with what the transport knows of the message (opts may be NULL). */
void sb_mcp_handle_message_opts(struct sb_mcp_client *c, const char *data, size_t len,
				const struct sb_mcp_sink *reply, const struct sb_mcp_msg_opts *opts);
/* The same for a message the transport parsed already (mcp/message.h), so
 * that it is parsed once. */
struct sb_mcp_message;
void sb_mcp_handle_parsed(struct sb_mcp_client *c, const struct sb_mcp_message *m, const struct sb_mcp_sink *reply,
			  const struct sb_mcp_msg_opts *opts);

/* A message the transport refused to keep because it is longer than max
 * bytes. id: the request id found in it, or NULL. */
void sb_mcp_handle_oversize(struct sb_mcp_client *c, size_t len, size_t max, const json_t *id,
			    const struct sb_mcp_sink *reply);

/* Cancel the client's request with this id, as notifications/cancelled
 * would (an HTTP transport calls it when a request's stream closes early):
 * its sandbox is killed and it gets no response. Unknown ids are ignored. */
void sb_mcp_client_cancel(struct sb_mcp_client *c, const json_t *id, const char *reason);

/* Cancel the call whose reply sink has this ctx (an HTTP transport: the
 * request's stream closed before its answer). Unknown ctx are ignored. */
void sb_mcp_client_cancel_stream(struct sb_mcp_client *c, const void *reply_ctx, const char *reason);

/* Cancel every call of the client (an HTTP session was ended). */
void sb_mcp_client_cancel_all(struct sb_mcp_client *c, const char *reason);

/* Housekeeping between messages (joins finished call threads). */
void sb_mcp_client_idle(struct sb_mcp_client *c);

#endif
