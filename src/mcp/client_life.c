/* A client's life as the transports drive it (mcp.h): made with its table
 * of calls in flight, its calls cancelled (one, a stream's, all), the
 * finished ones reaped while it idles, and freed with its tasks' ties.
 * Apart from protocol.c, which answers the client's messages. */
#include <stddef.h>

#include "mcp/calls.h"
#include "mcp/client.h"
#include "mcp/mcp.h"
#include "mcp/server.h"
#include "mcp/tasks.h"

struct sb_mcp_client *sb_mcp_client_new(struct sb_mcp_server *s, const char *owner, const struct sb_mcp_sink *notify)
{
	struct sb_mcp_client *c = sb_mcp_client_alloc(s, owner, notify);
	if (c && !(c->calls = sb_calls_new(c))) {
		sb_mcp_client_release(c);
		c = NULL;
	}
	return c;
}

void sb_mcp_client_free(struct sb_mcp_client *c)
{
	if (!c)
		return;
	sb_calls_free(c->calls);
	sb_tasks_client_gone(c->srv->tasks, c);
	sb_mcp_client_release(c);
}

void sb_mcp_client_cancel(struct sb_mcp_client *c, const json_t *id, const char *reason)
{
	sb_calls_cancel(c->calls, id, reason);
}

void sb_mcp_client_cancel_stream(struct sb_mcp_client *c, const void *reply_ctx, const char *reason)
{
	sb_calls_cancel_stream(c->calls, reply_ctx, reason);
	sb_tasks_cancel_stream(c->srv->tasks, reply_ctx);
}

void sb_mcp_client_cancel_all(struct sb_mcp_client *c, const char *reason)
{
	sb_calls_cancel_all(c->calls, reason);
}

void sb_mcp_client_idle(struct sb_mcp_client *c)
{
	sb_calls_reap(c->calls);
}
