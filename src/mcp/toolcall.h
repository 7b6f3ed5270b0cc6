/* Carrying out one tools/call: turn checked arguments into a job, run it,
 * and turn the result into an MCP CallToolResult. A failure of the user's
 * code or of the sandbox is a result with isError: true and a message
 * saying what to do, never a JSON-RPC error. */
#ifndef SAGEBOX_MCP_TOOLCALL_H
#define SAGEBOX_MCP_TOOLCALL_H

#include <jansson.h>
#include <stdbool.h>

#include "config/config.h"
#include "mcp/audit.h"
#include "mcp/tools.h"
#include "runner/runner.h"

struct sb_tool_env {
	const struct sb_config *cfg;
	struct sb_runner *runner;          /* NULL: runner_err says why */
	const struct sb_error *runner_err;
	const char *version;               /* negotiated protocol revision */
};

/* Returns the CallToolResult (new reference). *cancelled is set when the
 * job was cancelled through hooks->cancel_fd (the caller then sends nothing).
 * rec is filled for the audit log. */
json_t *sb_tool_execute(const struct sb_tool_env *env, const struct sb_tool *t, const struct sb_run_args *args,
			const struct sb_run_hooks *hooks, struct sb_audit_record *rec, bool *cancelled);

/* The text block of a run result, written for a model: stdout, then stderr
 * (labelled), then the verdict and, on failure, what to do (malloc'd). */
char *sb_result_text(const struct sb_result *r, const struct sb_tool *t, const struct sb_config *cfg);

/* A CallToolResult with one text block (text is copied). */
json_t *sb_tool_text_result(const char *text, bool is_error);

#endif
