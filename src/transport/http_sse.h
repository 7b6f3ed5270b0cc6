/* The HTTP transport's SSE pump: a libmicrohttpd response that streams a
 * deferred answer (http_exchange.h) as Server-Sent Events, one "message"
 * event per JSON-RPC message, with a comment line after 15 quiet seconds
 * so that proxies and idle timers keep a long call's stream open. It ends
 * when the exchange is done, and with an error when the client hung up or
 * the server is stopping. */
#ifndef SAGEBOX_TRANSPORT_HTTP_SSE_H
#define SAGEBOX_TRANSPORT_HTTP_SSE_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "transport/http_exchange.h"

/* The client on fd hung up, or *stopping is set. */
bool sb_http_peer_gone(const atomic_bool *stopping, int fd);

/* A response reading x (it takes its own reference) for the client on fd,
 * with its Content-Type and X-Accel-Buffering headers; NULL: out of memory. */
struct MHD_Response *sb_http_sse_response(struct sb_http_exchange *x, int fd, const atomic_bool *stopping);

#endif
