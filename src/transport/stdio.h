/* MCP's stdio transport: newline-delimited JSON-RPC messages on the given
 * input and output fds. Nothing but protocol messages is written to the
 * output, one compact JSON object per line, whole messages only (writes are
 * serialized by a mutex). */
#ifndef SAGEBOX_TRANSPORT_STDIO_H
#define SAGEBOX_TRANSPORT_STDIO_H

#include <jansson.h>
#include <stddef.h>

#include "mcp/mcp.h"

/* The longest message kept: MCP messages from a client are small (a 50,000
 * character program is at most 1.2 MB even fully escaped). Longer lines are
 * answered with an error and discarded as they arrive. */
#define SB_STDIO_MAX_MESSAGE (8u * 1024 * 1024)

struct sb_stdio;

struct sb_stdio *sb_stdio_new(int in_fd, int out_fd, size_t max_message);
void sb_stdio_free(struct sb_stdio *t);

/* Writing one byte to this fd (async-signal-safe) makes sb_stdio_serve return. */
int sb_stdio_stop_fd(struct sb_stdio *t);

/* Serve one client (the peer on the other end, owner id "stdio"): read and
 * dispatch messages until the input ends, the output breaks or a stop is
 * requested, then cancel the client's calls and wait for them. Every answer
 * and notification goes to the one output. Returns 0, or -1 on a read error
 * (errno set) or when the client could not be created (ENOMEM). */
int sb_stdio_serve(struct sb_stdio *t, struct sb_mcp_server *srv);
/* The same with another owner id (the service: one per connection). */
int sb_stdio_serve_as(struct sb_stdio *t, struct sb_mcp_server *srv, const char *owner);

#endif
