/* Checks of an HTTP request's headers that need no state: Host and Origin
 * (DNS rebinding), and the 2026-07-28 request metadata headers that mirror
 * the body (MCP-Protocol-Version, Mcp-Method, Mcp-Name, and the
 * Mcp-Param-* headers of a tool's x-mcp-header arguments). */
#ifndef SAGEBOX_TRANSPORT_HTTP_GUARD_H
#define SAGEBOX_TRANSPORT_HTTP_GUARD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Where the server listens, as the guard needs it. */
struct sb_http_bind {
	char addr[64];        /* numeric: "127.0.0.1", "::1", "0.0.0.0", "::" */
	unsigned port;
	bool loopback;        /* addr is a loopback address */
	bool wildcard;        /* addr is 0.0.0.0 or :: */
	const char *origins;  /* extra allowed origins and hosts, comma-separated (may be NULL) */
};

/* 0 if the Host header (NULL: absent) names this server, else -1 with why. */
int sb_http_check_host(const struct sb_http_bind *b, const char *host, char *why, size_t size);

/* 0 if the Origin header (NULL: absent, as from a non-browser client) may
 * talk to this server, else -1 with why. */
int sb_http_check_origin(const struct sb_http_bind *b, const char *origin, char *why, size_t size);

/* The 2026-07-28 metadata headers against the request body (msg: the parsed
 * JSON-RPC request): 0, or -1 with why (a HeaderMismatch, -32020). hv, hm,
 * hn: MCP-Protocol-Version, Mcp-Method, Mcp-Name (NULL when absent). */
int sb_http_check_mirrors(const json_t *msg, const char *hv, const char *hm, const char *hn, char *why, size_t size);

/* A request header's value by name (NULL: absent). */
typedef const char *(*sb_http_header_fn)(void *hctx, const char *name);

/* The Mcp-Param-{name} headers of a 2026-07-28 tools/call against its
 * arguments (the tool's x-mcp-header arguments, mcp/toolview.h): each
 * argument given (and not null) must come with its header, free of invalid
 * characters, equal to it after Base64 decoding (integers compared as
 * numbers). 0, or -1 with why (a HeaderMismatch, -32020). */
int sb_http_check_params(const json_t *msg, sb_http_header_fn header, void *hctx, char *why, size_t size);

/* The handle a 2026-07-28 request is routed by (what a router reads from
 * its headers, here from the checked body): a tools/call's first
 * x-mcp-header argument, a tasks request's taskId; NULL when none. */
const char *sb_http_routing_handle(const json_t *msg);

#endif
