/* Workspace files as links: a session's call that wrote files
 * lists each new or changed one as an MCP resource_link content block,
 *   {"type":"resource_link", "uri":"sagebox://session/ID/PATH",
 *    "name":PATH, "mimeType":M (when the extension says)}
 * PATH relative to /work, each byte outside RFC 3986's unreserved set and
 * '/' percent-encoded. Read back with resources/read by the session's owner
 * (mcp/, the owner checks of file_read). At most SB_WRITTEN_MAX links;
 * more are counted in a text line. */
#ifndef SAGEBOX_TOOLS_LINKS_H
#define SAGEBOX_TOOLS_LINKS_H

#include "core/result.h"
#include "tools/tool.h"

#define SB_SESSION_URI_PREFIX "sagebox://session/"

void sb_tool_result_links(struct sb_tool_result *r, const char *sid, const struct sb_result *res);

#endif
