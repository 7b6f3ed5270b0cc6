/* MCP resources (resources/list, resources/read) and the MCP Apps extension
 * (io.modelcontextprotocol/ui, SEP-1865):
 *
 *   ui://sagebox/viewer        the viewer of run results (text/html;profile=
 *                              mcp-app), offered only to a client that
 *                              declares the extension with that MIME type;
 *   sagebox://session/ID/PATH  a file of session ID's workspace (PATH relative
 *                              to /work), read by the session's owner only,
 *                              through the same path as file_read.
 *
 * A client declares the extension in initialize's capabilities (handshake
 * era) or in each request's _meta client capabilities (2026-07-28); either
 * way it is the request's capabilities. A client that does not gets no
 * _meta.ui on its tools and no viewer in resources/list. */
#ifndef SAGEBOX_MCP_RESOURCES_H
#define SAGEBOX_MCP_RESOURCES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "mcp/request.h"

#define SB_UI_EXTENSION "io.modelcontextprotocol/ui"
#define SB_UI_MIME "text/html;profile=mcp-app"
#define SB_UI_VIEWER_URI "ui://sagebox/viewer"
#define SB_SESSION_URI_PREFIX "sagebox://session/"
/* resources/read of a resource that does not exist (the MCP spec's code). */
#define SB_RPC_RESOURCE_NOT_FOUND (-32002)

/* The client declared the MCP Apps extension with the mcp-app HTML type. */
bool sb_ui_declared(const json_t *capabilities);

/* For a client with the extension (capabilities): _meta.ui.resourceUri on
 * the tools of a tools/list result whose results the viewer shows (the
 * rows marked viewed: the run tools, job_output, interact_update), and
 * _meta.ui.visibility ["app"] on the viewer's own (app_only: the host
 * hides it from the model). For a client without: no _meta.ui, and the
 * app-only tools are not listed. */
void sb_ui_link_tools(json_t *tools_list, const json_t *capabilities);

/* For a client with the extension: the extension in the server's
 * capabilities object (initialize's, server/discover's). */
void sb_ui_server_capability(json_t *server_caps, const json_t *client_caps);

/* resources/list's result (new reference). */
json_t *sb_resources_list(const struct sb_mcp_request *q);

/* resources/read: the result (new reference), or NULL with *code and msg
 * (a JSON-RPC error) set. */
json_t *sb_resources_read(const struct sb_mcp_request *q, int *code, char *msg, size_t size);

#endif
