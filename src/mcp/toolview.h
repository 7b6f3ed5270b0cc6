/* The tools as MCP shows them in a given revision: tools/list entries from
 * the rows of the tool table, and a CallToolResult from what a handler gave
 * back. Fields a revision does not define are left out. */
#ifndef SAGEBOX_MCP_TOOLVIEW_H
#define SAGEBOX_MCP_TOOLVIEW_H

#include <jansson.h>
#include <stdbool.h>

#include "tools/tool.h"

/* The result of tools/list (new reference). */
json_t *sb_mcp_tools_list(const struct sb_config *cfg, const char *revision);

/* A CallToolResult; takes r's content and structured result. */
json_t *sb_mcp_call_result(struct sb_tool_result *r, const char *revision);

/* A CallToolResult with one text block. */
json_t *sb_mcp_text_result(const char *text, bool is_error);

/* An argument that 2026-07-28 clients copy into the HTTP header
 * Mcp-Param-<header> (its schema's x-mcp-header). */
enum sb_mcp_param_type { SB_MCP_PARAM_STRING, SB_MCP_PARAM_INTEGER, SB_MCP_PARAM_BOOLEAN };
struct sb_mcp_param_header {
	const char *header;
	const char *arg;
	enum sb_mcp_param_type type;
};
#define SB_MCP_PARAM_HEADERS_MAX 8
/* The x-mcp-header arguments of the tool named tool, into out; how many
 * (0 for a tool that has none, or no such tool). */
size_t sb_mcp_param_headers(const char *tool, struct sb_mcp_param_header out[SB_MCP_PARAM_HEADERS_MAX]);

#endif
