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

#endif
