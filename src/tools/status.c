#include "tools/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/sessions/sessions.h"
#include "tools/sessions.h"
#include "workspaces/store.h"
#include "tools/report_text.h"
#include "tools/version.h"

char *sb_status_description(const struct sb_config *cfg)
{
	return strdup("Report the sandbox's state without running any code: the backend in use, whether Sage, "
		      "Python and the shell are available and their versions, which isolation and limits are "
		      "really enforced on this machine, the active settings, your named workspaces with their "
		      "sizes and caps, and whether the user's project folder is bound at /work/project. Call it when a run tool reports "
		      "that the sandbox failed (rather than a traceback from your code), or when the user asks how "
		      "the sandbox is set up.");
}

json_t *sb_status_output_schema(void)
{
	return json_pack("{s:s, s:{s:{s:s}}, s:[s]}", "type", "object", "properties", "settings", "type", "object",
			 "required", "settings");
}

void sb_status_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
		       struct sb_tool_result *out)
{
	const struct sb_tool_server *srv = ctx->srv;
	json_t *st = srv->runner ? sb_runner_status(srv->runner) : NULL;
	if (!json_is_object(st)) {
		json_t *inner = st;
		st = json_pack("{s:b, s:s, s:s}", "ok", 0, "error",
			       srv->runner_err.msg[0] ? srv->runner_err.msg : "the runner could not be created", "hint",
			       srv->runner_err.hint);
		if (inner)
			json_object_set_new(st, "status", inner);
	}
	json_object_set_new(st, "settings", sb_config_to_json(srv->cfg));
	json_object_set_new(st, "mcp",
			    json_pack("{s:s, s:s, s:s?, s:s}", "server_version", SAGEBOX_VERSION, "protocol_version",
				      ctx->revision ? ctx->revision : "", "audit_log",
				      srv->cfg->audit_log[0] ? srv->cfg->audit_log : NULL, "client",
				      ctx->owner ? ctx->owner : ""));
	/* The caller's own sessions and jobs, and nobody else's: clients share
	 * the server, not what they have open in it. */
	struct sb_error err = {0};
	struct sb_sessions *ss = srv->runner && ctx->owner ? sb_runner_sessions(srv->runner, &err) : NULL;
	if (ss)
		json_object_set_new(json_object_get(st, "mcp"), "usage", sb_session_usage(ss, ctx->owner));
	/* The caller's named workspaces on disk, their sizes and the caps. */
	char client[SB_WS_CLIENT_MAX];
	if (ss && !sb_tools_ws_client(ctx, client, sizeof client, NULL))
		json_object_set_new(st, "workspaces", sb_workspace_list(ss, client));
	char *text = sb_status_text(st, SB_REPORT_BRIEF);
	sb_tool_result_text(out, text ? text : "(the status could not be written as text; see structuredContent)");
	free(text);
	sb_tool_backend_of(srv, st, ctx->audit->backend, sizeof ctx->audit->backend);
	snprintf(ctx->audit->verdict, sizeof ctx->audit->verdict, "status reported");
	ctx->audit->ok = true;
	out->structured = st;
}
