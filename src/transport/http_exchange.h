/* One POST's answer: the reply sink the MCP layer writes a request's
 * messages to (its progress and log notifications, then its response), and
 * what the HTTP side reads them from, as one JSON body or as an SSE stream.
 * Shared by the two sides with a reference each; the HTTP side closing it
 * early (the client hung up) cancels the request. */
#ifndef SAGEBOX_TRANSPORT_HTTP_EXCHANGE_H
#define SAGEBOX_TRANSPORT_HTTP_EXCHANGE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "mcp/mcp.h"

/* Messages queued for a client that does not read them are capped; beyond
 * this the stream is treated as gone (a slow reader cannot grow our memory). */
#define SB_HTTP_EXCHANGE_MAX_QUEUED (16u * 1024 * 1024)

struct sb_http_msg {
	char *text;             /* compact JSON */
	size_t len;
	bool response;          /* has an id and no method: the answer */
	bool null_id;           /* an error answering a message that had no valid id */
	bool error;             /* a JSON-RPC error response */
	struct sb_http_msg *next;
};

struct sb_http_exchange {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct sb_http_msg *head, **tail;
	size_t queued;
	bool done;              /* the MCP side said done: nothing more comes */
	bool closed;            /* the HTTP side is gone: sends fail */
	int rejected;           /* JSON-RPC code of a refusal before any method ran, or 0 */
	int refs;
	bool notifications;     /* keep notifications (an SSE answer); else only the response */
	struct sb_mcp_client *client;  /* to cancel the request when the stream closes */
};

/* A new exchange with two references (the MCP side drops one at done).
 * notifications: the answer is a stream that carries them; a JSON answer
 * has room for the response only, so the rest is dropped as it comes. */
struct sb_http_exchange *sb_http_exchange_new(struct sb_mcp_client *client, bool notifications);
/* The sink to hand to the MCP layer. */
struct sb_mcp_sink sb_http_exchange_sink(struct sb_http_exchange *x);

/* Take the first queued message (caller frees with sb_http_msg_free), or
 * NULL. */
struct sb_http_msg *sb_http_exchange_take(struct sb_http_exchange *x);
void sb_http_msg_free(struct sb_http_msg *m);

/* Wait until a message is queued or done, at most ms. Returns true if
 * there is something to take or the exchange is done. */
bool sb_http_exchange_wait(struct sb_http_exchange *x, int ms);
bool sb_http_exchange_done(struct sb_http_exchange *x);
/* Wait until done, at most ms; returns whether it is. */
bool sb_http_exchange_wait_done(struct sb_http_exchange *x, int ms);

/* Another reference (a stream reader's), dropped with sb_http_exchange_unref. */
void sb_http_exchange_ref(struct sb_http_exchange *x);
void sb_http_exchange_unref(struct sb_http_exchange *x);

/* The HTTP side is finished with it. If the request was not done, it is
 * cancelled (its sandbox killed); reason says why. Drops the HTTP side's
 * reference. */
void sb_http_exchange_close(struct sb_http_exchange *x, const char *reason);

#endif
