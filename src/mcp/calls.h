/* One client's tools/call requests in flight. Each runs on its own thread;
 * a tool that runs code first waits for one of the server's job slots
 * (max_concurrent over all clients; queued calls can be cancelled before
 * they start). A call is cancelled by writing to a pipe the runner watches
 * (its cancel_fd): the sandbox is killed and no response is sent, as MCP
 * requires. The reader never waits for a call, so pings and cancellations
 * are answered while jobs run. */
#ifndef SAGEBOX_MCP_CALLS_H
#define SAGEBOX_MCP_CALLS_H

#include <jansson.h>

#include "mcp/request.h"
#include "tools/tool.h"

struct sb_calls;

/* Calls waiting or running at once for one client, beyond which new calls
 * are refused. */
#define SB_CALLS_MAX_IN_FLIGHT 64

enum sb_call_start {
	SB_CALL_STARTED,
	SB_CALL_DUPLICATE_ID, /* a call with this id is still in flight */
	SB_CALL_BUSY,         /* SB_CALLS_MAX_IN_FLIGHT reached */
	SB_CALL_FAILED,       /* no memory, no thread */
};

struct sb_calls *sb_calls_new(struct sb_mcp_client *client);
/* Cancel every call, wait for all threads, free. */
void sb_calls_free(struct sb_calls *c);

/* Start a call whose arguments were checked. The request's id and
 * progress_token (may be NULL) and args are copied; the call answers
 * through req->reply and calls its done. */
enum sb_call_start sb_calls_start(struct sb_calls *c, const struct sb_mcp_request *req, const struct sb_tool *t,
				  const json_t *args, const json_t *progress_token);

/* Cancel the call with this id, if it is in flight (calls whose ids are
 * scoped to their stream are not found this way). */
void sb_calls_cancel(struct sb_calls *c, const json_t *id, const char *reason);

/* Cancel the call whose reply sink has this ctx, if it is in flight. */
void sb_calls_cancel_stream(struct sb_calls *c, const void *reply_ctx, const char *reason);

/* Cancel every call in flight (new calls may still start). */
void sb_calls_cancel_all(struct sb_calls *c, const char *reason);

/* Join the threads of finished calls. */
void sb_calls_reap(struct sb_calls *c);

/* Cancel every call and wait for all threads. */
void sb_calls_shutdown(struct sb_calls *c);

/* One answered tools/call, for the metrics: its outcome (ok, error,
 * refused, cancelled), the backend that ran it ("": none) and its time. */
void sb_calls_count(const struct sb_tool *t, const char *outcome, const char *backend, uint64_t ms);

#endif
