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
 * reaper thread ends connections that take
 * longer than request_timeout_s to send a request (slow loris) and sessions
 * idle too long. */
#ifndef SAGEBOX_TRANSPORT_HTTP_H
#define SAGEBOX_TRANSPORT_HTTP_H

#include <stdbool.h>

#include "mcp/mcp.h"
#include "transport/http_core.h"
#include "util/error.h"

struct sb_http_options {
	struct sb_http_bind bind;
	const char *tls_cert, *tls_key;   /* PEM files; both or neither */
	const char *token_file;           /* NULL: the default token */
	bool no_auth;                     /* --insecure-no-auth (loopback only) */
	bool allow_remote;                /* --allow-remote: an address other than loopback */
	struct sb_http_limits limits;
	unsigned max_connections;         /* open connections (threads) at once */
	unsigned request_timeout_s;       /* to send one whole request */
	unsigned idle_timeout_s;          /* a connection with no traffic */
};

#define SB_HTTP_MAX_CONNECTIONS 256
#define SB_HTTP_REQUEST_TIMEOUT_S 30
#define SB_HTTP_IDLE_TIMEOUT_S 120
/* A new connection's time to send its first request's headers (or the
 * request timeout, when shorter): http_gate.h. */
#define SB_HTTP_HEADER_TIMEOUT_S 10

/* Defaults for everything but the address. */
void sb_http_options_defaults(struct sb_http_options *o);

/* Parse "[ADDR:]PORT" ("8080", "127.0.0.1:8080", "[::1]:8080",
 * "0.0.0.0:8080", "localhost:8080") into o->bind. */
int sb_http_parse_listen(const char *spec, struct sb_http_options *o, struct sb_error *err);

/* 0 if the options may be used together and on this address (e.g. a
 * non-loopback address needs allow_remote), else -1 naming the problem and
 * the fix. sb_http_start checks them again. */
int sb_http_check_options(const struct sb_http_options *o, struct sb_error *err);

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

#endif
