/* interact_update: the viewer's call when the user moves a control of an
 * interact (core/interact.h). Only for the app (tools/table.c marks it
 * app_only; mcp/ lists and runs it only for a client that declared the MCP
 * Apps extension). It is a call in the session like any other: the same
 * job slot, limits, timeout, audit lines and ownership; the runner checks
 * the values against what the interact declared before anything runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/interact.h"
#include "tools/interact_tool.h"
#include "tools/run.h"
#include "tools/sessions.h"

char *sb_interact_update_description(const struct sb_config *cfg)
{
	(void)cfg;
	return sb_tools_printed(
		"Run an interact of a session again with new values for its controls, and return what it "
		"displayed. The sagebox viewer calls it when the user moves a control; a model does not. "
		"Each value must be one the control declares (a slider's number on its steps and in its range, "
		"an option's index, true or false, a string, a \"#rrggbb\" color); a control left out keeps "
		"its default.");
}

void sb_interact_update_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
				struct sb_tool_result *out)
{
	const struct sb_tool_server *srv = ctx->srv;
	const char *sid = sb_tool_arg_text(args, "session_id", NULL);
	const char *iid = sb_tool_arg_text(args, "interact_id", NULL);
	struct sb_error err = {0};
	if (!sb_interact_id_ok(iid)) {
		sb_fail(&err, "interact_id \"%.40s\" is not an interact's id (\"i\" and 16 hex digits); nothing was run",
			iid);
		sb_hint(&err, "take the id from the interact's display item");
		sb_run_refused(ctx, out, &err);
		return;
	}
	char *values = json_dumps(json_object_get(args, "values"), JSON_COMPACT);
	if (!values) {
		sb_fail(&err, "out of memory");
		sb_run_refused(ctx, out, &err);
		return;
	}
	/* (Python: a Sage session takes it too; the driver runs the function,
	 * preparsing nothing) */
	struct sb_job job = {.kind = SB_JOB_SESSION, .owner = ctx->owner, .session = sid, .lang = SB_LANG_PYTHON,
			     .interact = iid, .code = values, .code_len = strlen(values), .limits = srv->cfg->limits};
	ctx->audit->timeout_s = job.limits.timeout_s;
	struct sb_run_out ro;
	memset(&ro, 0, sizeof ro);
	if (!srv->runner) {
		sb_tools_unusable(ctx, out, &err);
	} else if (sb_runner_run(srv->runner, &job, &ctx->hooks, &ro)) {
		if (ro.unusable)
			sb_tools_unusable(ctx, out, &ro.err);
		else
			sb_run_refused(ctx, out, &ro.err);
		sb_run_out_free(&ro);
	} else {
		sb_run_result(t, ctx, out, &ro.res, sid, &ro.session);
		json_object_set_new(out->structured, "interact_id", json_string(iid));
		sb_run_out_free(&ro);
	}
	free(values);
}
