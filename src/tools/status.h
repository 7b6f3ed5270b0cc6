/* sandbox_status: the backend's state and the settings, never running code. */
#ifndef SAGEBOX_TOOLS_STATUS_H
#define SAGEBOX_TOOLS_STATUS_H

#include "tools/tool.h"

char *sb_status_description(const struct sb_config *cfg);
json_t *sb_status_output_schema(void);
void sb_status_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
		       struct sb_tool_result *out);

#endif
