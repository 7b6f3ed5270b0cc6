/* The MCP revisions this server speaks and what each one defines. A field a
 * revision does not define is left out of answers in that revision.
 *
 * Two eras: the legacy revisions (2024-11-05 to 2025-11-25) agree on one
 * with the initialize handshake and keep it for the connection (stdio) or
 * session (HTTP); the modern ones (2026-07-28) have no handshake: every
 * request names its revision and the client's capabilities in its _meta. */
#ifndef SAGEBOX_MCP_REVISION_H
#define SAGEBOX_MCP_REVISION_H

#include <jansson.h>
#include <stdbool.h>

enum sb_rev_feature {
	SB_REV_TOOL_ANNOTATIONS,     /* tool annotations */
	SB_REV_PROGRESS_MESSAGE,     /* notifications/progress "message" */
	SB_REV_TOOL_TITLE,           /* tool "title" */
	SB_REV_OUTPUT_SCHEMA,        /* tool "outputSchema" */
	SB_REV_STRUCTURED_CONTENT,   /* CallToolResult "structuredContent" */
	SB_REV_RESOURCE_LINK,        /* "resource_link" content blocks */
	SB_REV_SERVER_DESCRIPTION,   /* serverInfo "description" */
	SB_REV_ARG_ERROR_RESULT,     /* tool arguments that break the schema: a tool
					execution error (isError), not -32602 (SEP-1303) */
	SB_REV_TASKS,                /* tasks (experimental core tasks; from 2026-07-28 the
					extension io.modelcontextprotocol/tasks) and tools'
					execution.taskSupport */
	SB_REV_STATELESS,            /* no handshake: _meta per request, server/discover,
					result "resultType" and "_meta" serverInfo */
	SB_REV_CACHE_HINTS,          /* "ttlMs" and "cacheScope" on cacheable results */
	SB_REV_PARAM_HEADERS,        /* "x-mcp-header" on tool arguments: clients copy them
					into Mcp-Param-{name} headers (Streamable HTTP) */
};

/* The revision to answer an initialize that asked for `asked`: the same
 * when it is a legacy revision this server speaks, else the newest legacy
 * one (a static string). initialize never selects a modern revision. */
const char *sb_rev_negotiate(const char *asked);

/* The modern revision named v (a static string), or NULL when v is not one
 * this server speaks. */
const char *sb_rev_modern(const char *v);

/* Whether v names a legacy revision this server speaks. */
bool sb_rev_is_legacy(const char *v);

/* The modern revisions this server speaks, newest first (new reference):
 * server/discover's "supportedVersions" and UnsupportedProtocolVersion's
 * "supported". */
json_t *sb_rev_modern_list(void);

/* Whether revision rev (NULL: none yet) has the feature. */
bool sb_rev_has(const char *rev, enum sb_rev_feature f);

/* Whether rev has tasks in the core protocol (2025-11-25's experimental
 * tasks; from 2026-07-28 they are an extension a request names). */
bool sb_rev_tasks_core(const char *rev);

#endif
