/* The HTTP transport's slow-client reaper: it knows every connection
 * libmicrohttpd holds and, once a second, closes those that took too long
 * to send a request. A client gets request_timeout_s to send each whole
 * request (headers and body), a new connection header_timeout_s for its
 * first request's headers; one that trickles bytes (a slow loris, which
 * resets any idle timer) is cut off instead of holding its thread for
 * ever. At most SB_HTTP_PREAUTH_MAX connections that have shown no valid
 * token are kept: past it the oldest is closed. The same thread calls
 * tick(ctx) each second for the transport's other housekeeping. */
#ifndef SAGEBOX_TRANSPORT_HTTP_REAPER_H
#define SAGEBOX_TRANSPORT_HTTP_REAPER_H

#include <stdbool.h>

#include "util/error.h"

/* Connections in libmicrohttpd that have not shown a valid token yet, at
 * most: past it the oldest is closed. Over plain HTTP the gate hands over
 * only connections whose headers are in, which are answered at once; with
 * TLS it cannot read them, and this keeps handshakes that stall from
 * taking the slots of clients that have a token. */
#define SB_HTTP_PREAUTH_MAX 64

struct sb_http_reaper;
struct sb_http_conn;

/* Start the reaper's thread; NULL with why. */
struct sb_http_reaper *sb_http_reaper_start(unsigned request_timeout_s, unsigned header_timeout_s,
					    void (*tick)(void *ctx), void *ctx, struct sb_error *err);
/* Join the thread and free (every connection must be closed first). NULL is ignored. */
void sb_http_reaper_stop(struct sb_http_reaper *r);

/* A new connection on fd, waiting for its first request's headers (NULL:
 * out of memory; it is then not watched). */
struct sb_http_conn *sb_http_conn_open(struct sb_http_reaper *r, int fd);
/* Before its fd is closed: the reaper never touches an fd number that may
 * have been reused. */
void sb_http_conn_close(struct sb_http_reaper *r, struct sb_http_conn *k);
/* Waiting for (the rest of) a request, from now: request_timeout_s. */
void sb_http_conn_receiving(struct sb_http_reaper *r, struct sb_http_conn *k, bool on);
/* A request on it showed a valid token. */
void sb_http_conn_authed(struct sb_http_reaper *r, struct sb_http_conn *k);

#endif
