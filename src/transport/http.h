/* MCP's Streamable HTTP transport, on libmicrohttpd: POST of JSON-RPC to
 * /mcp, answered as JSON or as an SSE stream (a call's progress travels on
 * its own stream; closing the stream cancels the call). Both eras: the
 * handshake era with Mcp-Session-Id sessions (2025-03-26 .. 2025-11-25,
 * and 2024-11-05 clients that use this transport), and 2026-07-28 with
 * the request metadata headers. See docs/MCP.md and docs/DEPLOY.md.
 *
 * Threads: a gate (http_gate.h) accepts connections and holds each, with
 * no thread, until its headers are in; then one per connection
 * (libmicrohttpd's thread-per-connection mode), capped by max_connections,
 * so that connections that never show a token cannot take those; a
 * reaper thread (http_reaper.h) ends connections that take longer than
 * request_timeout_s to send a request (slow loris) and sessions idle too
 * long. A call's progress is streamed by http_sse.h; the options are
 * checked by http_options.h. This file is the libmicrohttpd glue. */
#ifndef SAGEBOX_TRANSPORT_HTTP_H
#define SAGEBOX_TRANSPORT_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include "mcp/mcp.h"
#include "transport/http_core.h"
#include "transport/http_options.h"
#include "util/error.h"

struct sb_http;

/* Load the tokens and TLS files, refuse unsafe combinations, and start
 * listening. token_path gets where the token is (the default token file,
 * or the token file), or "" without authentication. */
struct sb_http *sb_http_start(const struct sb_http_options *o, struct sb_mcp_server *srv, char *token_path,
			      size_t size, struct sb_error *err);

/* The URL clients use ("http://127.0.0.1:8080/mcp"). */
const char *sb_http_url(const struct sb_http *h);

/* Stop listening, end every connection and session (their calls
 * cancelled, their sandboxes killed), free. */
void sb_http_stop(struct sb_http *h);

/* Drain (sb_http_core_drain): /health says so, no new MCP session opens,
 * answers end their connections; what is open goes on. */
void sb_http_drain(struct sb_http *h, const char *why);
/* Requests in flight, open MCP sessions, and when the last request came
 * (monotonic ms; 0: none yet). */
void sb_http_open_work(struct sb_http *h, unsigned *inflight, unsigned *sessions, uint64_t *last_ms);
/* /health says "not ready" and why (NULL: ready again). */
void sb_http_not_ready(struct sb_http *h, const char *why);

#endif
