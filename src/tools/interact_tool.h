/* interact_update, the viewer's tool (tools/interact_tool.c). */
#ifndef SAGEBOX_TOOLS_INTERACT_TOOL_H
#define SAGEBOX_TOOLS_INTERACT_TOOL_H

#include "tools/tool.h"

char *sb_interact_update_description(const struct sb_config *cfg);
void sb_interact_update_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
				struct sb_tool_result *out);

#endif
