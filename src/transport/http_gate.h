/* The HTTP transport's front door: it listens and accepts, and keeps each
 * new connection (one descriptor in an epoll set: no thread) until the
 * client has sent its request's whole header block, which carries the
 * token; only then is the connection handed to libmicrohttpd, whose
 * connections each have a thread and count against max_connections.
 *
 * Why: 270 connections that each sent a request line and then
 * a byte a second held every one of libmicrohttpd's 256 connection slots
 * before any token was checked, and a client with a valid token got 0-1
 * answers of 30. At the gate such a connection costs a descriptor, has
 * header_timeout_s to finish its headers, and when more than max_pending
 * wait the oldest is closed: a real client sends its headers at once, so
 * it passes however many slow ones wait beside it. With TLS the gate
 * cannot read headers; it waits for the client's first whole TLS record
 * (its ClientHello) instead. */
#ifndef SAGEBOX_TRANSPORT_HTTP_GATE_H
#define SAGEBOX_TRANSPORT_HTTP_GATE_H

#include <stdbool.h>
#include <sys/socket.h>

#include "util/error.h"

struct sb_http_gate;

/* Takes a connection whose headers are in (fd blocking): true, and the
 * callee owns it from then on; false: no room (the connection limit), and
 * the gate closes it. */
typedef bool (*sb_http_gate_handoff)(void *ctx, int fd, const struct sockaddr *addr, socklen_t len);

struct sb_http_gate_options {
	const struct sockaddr *addr;  /* where to listen */
	socklen_t addr_len;
	bool tls;                     /* wait for a TLS record, not for HTTP headers */
	unsigned header_timeout_s;    /* to send the whole header block */
	unsigned max_pending;         /* connections waiting at the gate; past it the oldest is closed */
	sb_http_gate_handoff handoff;
	void *ctx;
};

/* Listen and start the gate's thread; NULL with why. */
struct sb_http_gate *sb_http_gate_start(const struct sb_http_gate_options *o, struct sb_error *err);
/* The port it listens on (the one chosen, for port 0). */
unsigned sb_http_gate_port(const struct sb_http_gate *g);
/* Stop listening, close what waits, join the thread, free. */
void sb_http_gate_stop(struct sb_http_gate *g);

#endif
