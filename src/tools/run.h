/* The run tools (run_sagemath, run_python, run_shell): one handler for all
 * three, the row's lang says which interpreter runs the code. */
#ifndef SAGEBOX_TOOLS_RUN_H
#define SAGEBOX_TOOLS_RUN_H

#include "tools/tool.h"

char *sb_run_sage_description(const struct sb_config *cfg);
char *sb_run_python_description(const struct sb_config *cfg);
char *sb_run_shell_description(const struct sb_config *cfg);
/* The timeout_seconds argument's description (names the default). */
char *sb_run_timeout_description(const struct sb_config *cfg);
/* The shape of sb_result_to_json. */
json_t *sb_run_output_schema(void);
void sb_run_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx, struct sb_tool_result *out);

/* A run's result as a tool's (the one place it is shaped): the audit
 * record, the text (with what the call did to session sid, when not NULL),
 * the figures and links, the structured result. */
void sb_run_result(const struct sb_tool *t, struct sb_tool_ctx *ctx, struct sb_tool_result *out, struct sb_result *res,
		   const char *sid, const struct sb_session_verdict *v);
/* The session cannot take the call (unknown, ended, wrong language, ...):
 * a tool error whose structuredContent keeps the run tools' schema. */
void sb_run_refused(struct sb_tool_ctx *ctx, struct sb_tool_result *out, const struct sb_error *err);

#endif
