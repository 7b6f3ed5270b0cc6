/* Checks of an HTTP request's headers that need no state: Host and Origin
 * (DNS rebinding), and the 2026-07-28 request metadata headers that mirror
 * the body (MCP-Protocol-Version, Mcp-Method, Mcp-Name). */
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

#endif
