/* The 2026-07-28 era ("modern"): no handshake. Every request names its
 * protocol revision and the client's capabilities in its _meta
 * (io.modelcontextprotocol/protocolVersion, .../clientCapabilities; the
 * optional .../clientInfo and .../logLevel), every result says
 * "resultType": "complete" and who answered (_meta .../serverInfo), and
 * server/discover tells a client what the server speaks. */
#ifndef SAGEBOX_MCP_STATELESS_H
#define SAGEBOX_MCP_STATELESS_H

#include <jansson.h>
#include <stdbool.h>

#include "config/config.h"

#define SB_META_PROTOCOL_VERSION "io.modelcontextprotocol/protocolVersion"
#define SB_META_CLIENT_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define SB_META_CLIENT_INFO "io.modelcontextprotocol/clientInfo"
#define SB_META_LOG_LEVEL "io.modelcontextprotocol/logLevel"
#define SB_META_SERVER_INFO "io.modelcontextprotocol/serverInfo"

/* What one request's _meta says. */
struct sb_meta {
	const char *revision;         /* static string */
	const json_t *capabilities;   /* borrowed from the request */
	char info[160];               /* clientInfo "name version", or "" */
	int log_level;                /* enum sb_log_level, or -1: none asked, so no log messages */
};

/* Why a request's _meta was refused: a JSON-RPC error. */
struct sb_meta_error {
	int code;                     /* -32602, or -32022 for a revision not spoken */
	char msg[256];
	json_t *data;                 /* owned; NULL or the error's data */
};

/* Read a modern request's _meta. Returns 0, or -1 with e filled: a missing
 * or malformed required key is -32602 (Invalid params), a revision this
 * server does not speak is -32022 with {"supported": [...], "requested"}. */
int sb_meta_read(const json_t *params, struct sb_meta *m, struct sb_meta_error *e);

/* serverInfo {name, version, title[, description]} as revision rev shows it. */
json_t *sb_mcp_server_info(const char *rev);

/* Add what revision rev requires of every result: "resultType" and the
 * _meta serverInfo (modern); nothing in the legacy era. */
void sb_stateless_stamp(json_t *result, const char *rev);

/* Add the caching hints ("ttlMs", "cacheScope") to a cacheable result. */
void sb_stateless_cache_hints(json_t *result, const char *rev);

/* The result of server/discover (new reference). */
json_t *sb_mcp_discover(const struct sb_config *cfg, const char *rev);

#endif
