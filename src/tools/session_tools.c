/* session_open, session_list, session_reset, session_close: their
 * descriptions, schemas and handlers (what they share with the file, job
 * and workspace tools is handler_shared.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "tools/sessions.h"
#include "util/buf.h"
#include "workspaces/store.h"

char *sb_session_open_description(const struct sb_config *cfg)
{
	return sb_workspaces_described(cfg, sb_tools_printed(
		"Open a session: a sandbox of its own whose interpreter keeps its state between calls. Pass the "
		"returned session_id to run_sagemath, run_python or run_shell, and variables, rings, functions, "
		"imports (Sage/Python) or the working directory and exported variables (shell) persist from one "
		"call to the next; files in its workspace /work persist too (file_write, file_read, file_list). "
		"Open one for iterative work, large objects you build once, plots and files, or background jobs "
		"(job_start with session_id); for a one-off question a call without session_id is simpler. "
		"lang is fixed: a sage session (the default) takes run_sagemath and run_python in the same "
		"interpreter, a python session run_python, a shell session run_shell. A session unused for %u "
		"minutes is closed with everything in it; at most %u of yours may be open (%u of all clients "
		"together). Close it with session_close when done.\n"
		"With workspace: \"NAME\" its /work is a named workspace kept on disk (at most %s): the files "
		"there are saved after every call and are back in the next session_open with the same NAME, "
		"after a close, an expiry or a restart of sagebox; session_save (and every close) saves its "
		"variables, which restore: true loads. Use one for work that spans days (a thesis, a course, a "
		"long search).",
		cfg->session_idle_minutes, cfg->max_sessions, cfg->max_sessions_total, cfg->workspace_size));
}

char *sb_session_workspace_description(const struct sb_config *cfg)
{
	return sb_workspaces_described(
		cfg, sb_tools_printed("A name (1-64 letters, digits, '.', '_' or '-') for a workspace kept on disk: created on "
				      "first use, its files (and saved variables) back at every later open with this name. At "
				      "most one session may have it open. Omit for a /work that goes with the session."));
}

char *sb_session_list_description(const struct sb_config *cfg)
{
	(void)cfg;
	return sb_tools_printed("List your open sessions: id, language, age and idle time in seconds, the memory its "
		       "interpreter uses (bytes resident, and bytes of its own), whether a call is running, and its "
		       "running background jobs.");
}

char *sb_session_reset_description(const struct sb_config *cfg)
{
	(void)cfg;
	return sb_tools_printed("Reset a session: a fresh interpreter (all variables, functions and imports are gone; "
		       "a shell session starts again in /work), while the files in /work are kept and running "
		       "background jobs go on.");
}

char *sb_session_close_description(const struct sb_config *cfg)
{
	(void)cfg;
	return sb_tools_printed("Close a session: every process it started is killed, its background jobs end, and its "
		       "workspace /work is discarded. Use file_export first to keep a file (when the user enabled "
		       "it). A session on a named workspace first saves its variables and files there: nothing of "
		       "it is lost.");
}

char *sb_session_id_description(const struct sb_config *cfg)
{
	return sb_tools_printed("A session from session_open: run the code in it, where earlier calls' variables and "
		       "files are kept (it expires after %u minutes unused). Omit for a fresh, stateless call.",
		       cfg->session_idle_minutes);
}

/* ---- handlers */
/* What opening on a named workspace did, for the model: which workspace,
 * what came back, what did not, and why. */
static void workspace_text(struct sb_buf *b, json_t *w)
{
	json_t *files = json_object_get(w, "files"), *state = json_object_get(w, "state");
	const char *name = json_string_value(json_object_get(w, "name"));
	if (json_is_true(json_object_get(w, "created")))
		sb_buf_printf(b, "\n/work is the new workspace %s, kept on disk: what you write there is saved after "
				 "every call.", name);
	else
		sb_buf_printf(b, "\n/work is the workspace %s, kept on disk: %lld files and %lld directories (%.2f MiB) "
				 "are back; what you write is saved after every call.",
			      name, (long long)json_integer_value(json_object_get(files, "files")),
			      (long long)json_integer_value(json_object_get(files, "dirs")),
			      (double)json_integer_value(json_object_get(files, "bytes")) / (1 << 20));
	sb_buf_printf(b, " It holds at most %.1f MiB.", (double)json_integer_value(json_object_get(w, "cap_bytes")) / (1 << 20));
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(files, "errors"), i, v)
		sb_buf_printf(b, "%s%s (%s)", i ? "; " : "\nNot restored: ", json_string_value(json_object_get(v, "path")),
			      json_string_value(json_object_get(v, "why")));
	json_array_foreach(json_object_get(files, "skipped"), i, v)
		sb_buf_printf(b, "%s%s (%s)", i ? "; " : "\nNot restored from the store: ",
			      json_string_value(json_object_get(v, "path")), json_string_value(json_object_get(v, "why")));
	if (!json_is_object(state)) /* (no restore asked: null) */
		return;
	const char *e = json_string_value(json_object_get(state, "error"));
	if (e) {
		sb_buf_printf(b, "\nNo variables were restored: %s", e);
		return;
	}
	sb_buf_printf(b, "\nRestored %lld variable%s", (long long)json_integer_value(json_object_get(state, "restored_count")),
		      json_integer_value(json_object_get(state, "restored_count")) == 1 ? "" : "s");
	json_array_foreach(json_object_get(state, "restored"), i, v)
		sb_buf_printf(b, "%s%s", i ? ", " : ": ", json_string_value(v));
	sb_buf_printf(b, ".");
	json_array_foreach(json_object_get(state, "failed"), i, v)
		sb_buf_printf(b, "%s%s (%s)", i ? "; " : "\nCould not be restored: ", json_string_value(json_object_get(v, "name")),
			      json_string_value(json_object_get(v, "why")));
	json_array_foreach(json_object_get(state, "not_saved"), i, v)
		sb_buf_printf(b, "%s%s (%s)", i ? "; " : "\nWere not saved (define them again): ",
			      json_string_value(json_object_get(v, "name")), json_string_value(json_object_get(v, "why")));
	if (json_string_value(json_object_get(state, "restarted")))
		sb_buf_printf(b, "\n(the interpreter was restarted: %s)", json_string_value(json_object_get(state, "restarted")));
}

void sb_session_open_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			     struct sb_tool_result *out)
{
	(void)t;
	struct sb_sessions *ss = sb_tools_sessions(ctx, out);
	if (!ss)
		return;
	struct sb_session_open_opts o = {.lang = SB_LANG_SAGE};
	const char *l = sb_tool_arg_text(args, "lang", NULL);
	if (l)
		sb_lang_parse(l, &o.lang);
	o.workspace = sb_tool_arg_text(args, "workspace", NULL);
	o.restore = json_is_true(json_object_get(args, "restore"));
	char client[SB_WS_CLIENT_MAX];
	struct sb_session_opened op;
	struct sb_error err = {0};
	if (o.restore && !o.workspace) {
		sb_fail(&err, "restore needs a workspace: the variables are kept in a named workspace");
		sb_hint(&err, "pass workspace: \"NAME\" with restore: true (workspace_list shows yours)");
		sb_tools_error(ctx, out, &err);
		return;
	}
	if (o.workspace && sb_tools_ws_client(ctx, client, sizeof client, &err)) {
		sb_tools_error(ctx, out, &err);
		return;
	}
	o.ws_client = client;
	if (sb_session_open(ss, ctx->owner, &o, &op, &err)) {
		sb_tools_error(ctx, out, &err);
		return;
	}
	snprintf(ctx->audit->session, sizeof ctx->audit->session, "%s", op.id);
	SB_AUTO_BUF b = {0};
	sb_buf_printf(&b, "Opened %s session %s. Pass session_id \"%s\" to %s; its workspace is /work (the working "
			  "directory). It closes after %u minutes unused; close it with session_close when done.",
		      sb_lang_name(o.lang), op.id, op.id,
		      o.lang == SB_LANG_SAGE ? "run_sagemath (or run_python)" : o.lang == SB_LANG_PYTHON ? "run_python"
											     : "run_shell",
		      op.idle_expiry_s / 60);
	if (op.workspace)
		workspace_text(&b, op.workspace);
	json_t *st = json_pack("{s:s, s:s, s:s, s:I}", "session_id", op.id, "lang", sb_lang_name(o.lang), "workspace",
			       SB_SANDBOX_WORKSPACE, "idle_expiry_s", (json_int_t)op.idle_expiry_s);
	if (op.workspace)
		json_object_set_new(st, "named_workspace", op.workspace);
	sb_tools_ok(ctx, out, b.data ? b.data : op.id, st);
}

static void mib(struct sb_buf *b, json_t *v)
{
	if (json_is_integer(v))
		sb_buf_printf(b, "%.1f MiB", (double)json_integer_value(v) / (1 << 20));
	else
		sb_buf_printf(b, "?");
}

void sb_session_list_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			     struct sb_tool_result *out)
{
	(void)t, (void)args;
	struct sb_sessions *ss = sb_tools_sessions(ctx, out);
	if (!ss)
		return;
	json_t *o = sb_session_list(ss, ctx->owner);
	json_t *arr = json_object_get(o, "sessions");
	SB_AUTO_BUF b = {0};
	if (!json_array_size(arr))
		sb_buf_printf(&b, "No open sessions (open one with session_open).");
	size_t i;
	json_t *s;
	json_array_foreach(arr, i, s) {
		sb_buf_printf(&b, "%s%s (%s): open %llds, idle %llds%s, memory ", i ? "\n" : "",
			      json_string_value(json_object_get(s, "session_id")),
			      json_string_value(json_object_get(s, "lang")),
			      (long long)json_integer_value(json_object_get(s, "age_s")),
			      (long long)json_integer_value(json_object_get(s, "idle_s")),
			      json_is_true(json_object_get(s, "busy")) ? ", running a call" : "");
		mib(&b, json_object_get(s, "memory_bytes"));
		sb_buf_printf(&b, " (");
		mib(&b, json_object_get(s, "private_memory_bytes"));
		sb_buf_printf(&b, " its own)");
		json_t *jobs = json_object_get(s, "running_jobs");
		size_t k;
		json_t *jv;
		json_array_foreach(jobs, k, jv)
			sb_buf_printf(&b, "%s%s", k ? ", " : "; jobs running: ", json_string_value(jv));
	}
	sb_tools_ok(ctx, out, b.data ? b.data : "", o);
}

void sb_session_reset_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			      struct sb_tool_result *out)
{
	(void)t;
	struct sb_tools_handle h;
	if (!sb_tools_handle(ctx, args, "session_id", &h, out) ||
	    sb_tools_handle_failed(ctx, out, &h, sb_session_reset(h.ss, ctx->owner, h.id, &h.err)))
		return;
	sb_tools_ok(ctx, out, "The session has a fresh interpreter: its variables are gone, its files in /work are kept.",
		    json_pack("{s:s, s:b}", "session_id", h.id, "reset", 1));
}

void sb_session_close_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			      struct sb_tool_result *out)
{
	(void)t;
	struct sb_tools_handle h;
	if (!sb_tools_handle(ctx, args, "session_id", &h, out) ||
	    sb_tools_handle_failed(ctx, out, &h, sb_session_close(h.ss, ctx->owner, h.id, &h.err)))
		return;
	sb_tools_ok(ctx, out, "The session is closed: its processes were killed and its workspace discarded.",
		    json_pack("{s:s, s:b}", "session_id", h.id, "closed", 1));
}
