/* The named workspaces as the model sees them: session_save,
 * workspace_list, the workspace part of session_open's answer, and the
 * line the descriptions and instructions carry. Deleting, exporting and
 * importing a workspace are the user's (`sagebox workspaces`), never a
 * tool's. The work is the runner's (runner/sessions/sessions.h) and the
 * store's (workspaces/store.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/sessions.h"
#include "util/buf.h"
#include "workspaces/store.h"

/* The most workspaces a description names (the rest counted). */
#define NAMED_MAX 12

int sb_tools_ws_client(const struct sb_tool_ctx *ctx, char *out, size_t n, struct sb_error *err)
{
	/* stdio and the service: the local user; HTTP: each token a client of
	 * its own, whose workspaces no other token can name */
	if (!ctx->srv->cfg->http_clients) {
		snprintf(out, n, "%s", SB_WS_CLIENT_LOCAL);
		return 0;
	}
	return sb_ws_client_of_token(ctx->owner ? ctx->owner : "", out, n, err);
}

static void size_text(struct sb_buf *b, uint64_t bytes)
{
	if (bytes >= (1ull << 30))
		sb_buf_printf(b, "%.1f GiB", (double)bytes / (1ull << 30));
	else
		sb_buf_printf(b, "%.1f MiB", (double)bytes / (1 << 20));
}

static void age_text(struct sb_buf *b, long long when)
{
	long long d = when > 0 ? (long long)time(NULL) - when : -1;
	if (d < 0)
		sb_buf_printf(b, "never used");
	else if (d < 3600)
		sb_buf_printf(b, "used %lld min ago", d / 60);
	else if (d < 86400 * 2)
		sb_buf_printf(b, "used %lld h ago", d / 3600);
	else
		sb_buf_printf(b, "used %lld days ago", d / 86400);
}

char *sb_workspaces_model_text(const struct sb_config *cfg)
{
	if (cfg->http_clients)
		return strdup("workspace_list shows the workspaces kept for you.");
	struct sb_ws_store st;
	if (sb_ws_store_open(&st, false, NULL))
		return strdup("None is kept yet.");
	json_t *list = sb_ws_list(&st, SB_WS_CLIENT_LOCAL);
	sb_ws_store_close(&st);
	SB_AUTO_BUF b = {0};
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v) {
		if (i == NAMED_MAX) {
			sb_buf_printf(&b, " and %zu more (workspace_list)", json_array_size(list) - NAMED_MAX);
			break;
		}
		/* names only as the store allows them: [A-Za-z0-9._-] */
		sb_buf_printf(&b, "%s%s (", i ? ", " : "Kept for you: ", json_string_value(json_object_get(v, "name")));
		size_text(&b, (uint64_t)json_integer_value(json_object_get(v, "bytes")));
		sb_buf_printf(&b, "%s)", json_is_object(json_object_get(v, "state")) ? ", saved variables" : "");
	}
	json_decref(list);
	if (!b.data)
		return strdup("None is kept yet.");
	sb_buf_printf(&b, ".");
	return sb_buf_steal(&b, NULL);
}

char *sb_workspaces_described(const struct sb_config *cfg, char *text)
{
	char *kept = sb_workspaces_model_text(cfg);
	char *s = text ? sb_tools_printed("%s %s", text, kept ? kept : "") : NULL;
	free(text);
	free(kept);
	return s;
}

char *sb_session_save_description(const struct sb_config *cfg)
{
	(void)cfg;
	return sb_tools_printed(
		"Save a workspace session's variables (one opened with session_open's workspace) into its workspace, "
		"as Sage's save_session() does: every variable the session made whose value can be pickled (rings "
		"and their elements, matrices, dicts, numbers, lists ...). The result names what could not be saved "
		"and why (an open file, a lambda, a function, a C object without pickle support). "
		"session_open {workspace, restore: true} loads them back later, also after sagebox restarts. "
		"A workspace session also saves on its own when it is closed, expires or sagebox stops cleanly; "
		"call this after work you do not want to lose. Its files in /work are kept after every call anyway.");
}

char *sb_workspace_list_description(const struct sb_config *cfg)
{
	return sb_workspaces_described(
		cfg, sb_tools_printed(
			     "List the named workspaces kept on disk for you (session_open {workspace: NAME} opens one): "
			     "name, size, when last used, whether a session has it open now, whether variables were saved, "
			     "and the caps (workspace_size for one, workspaces_total for all of yours). Deleting one is the "
			     "user's (sagebox workspaces rm), not a tool's."));
}

void sb_session_save_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			     struct sb_tool_result *out)
{
	(void)t;
	struct sb_tools_handle h;
	json_t *rep = NULL;
	if (!sb_tools_handle(ctx, args, "session_id", &h, out) ||
	    sb_tools_handle_failed(ctx, out, &h, sb_session_save(h.ss, ctx->owner, h.id, &rep, &h.err)))
		return;
	json_t *state = json_object_get(rep, "state");
	SB_AUTO_BUF b = {0};
	const char *e = json_string_value(json_object_get(state, "error"));
	if (e) {
		sb_buf_printf(&b, "The variables were NOT saved: %s", e);
	} else {
		json_t *saved = json_object_get(state, "saved");
		sb_buf_printf(&b, "Saved %lld variable%s (", (long long)json_integer_value(json_object_get(state, "saved_count")),
			      json_integer_value(json_object_get(state, "saved_count")) == 1 ? "" : "s");
		size_text(&b, (uint64_t)json_integer_value(json_object_get(state, "bytes")));
		sb_buf_printf(&b, ") into %s", json_string_value(json_object_get(state, "file")));
		size_t i;
		json_t *v;
		json_array_foreach(saved, i, v)
			sb_buf_printf(&b, "%s%s", i ? ", " : ": ", json_string_value(v));
		sb_buf_printf(&b, ".");
		json_t *ns = json_object_get(state, "not_saved");
		json_array_foreach(ns, i, v)
			sb_buf_printf(&b, "%s%s (%s)", i ? "; " : "\nNot saved: ", json_string_value(json_object_get(v, "name")),
				      json_string_value(json_object_get(v, "why")));
		sb_buf_printf(&b, "\nsession_open {workspace, restore: true} loads them back.");
	}
	json_t *files = json_object_get(rep, "files");
	size_t k;
	json_t *sk;
	json_array_foreach(json_object_get(files, "skipped"), k, sk)
		sb_buf_printf(&b, "%s%s (%s)", k ? "; " : "\nNot kept from /work: ", json_string_value(json_object_get(sk, "path")),
			      json_string_value(json_object_get(sk, "why")));
	if (json_string_value(json_object_get(files, "not_kept_before")))
		sb_buf_printf(&b, "\nNot kept from /work after the last call: %s",
			      json_string_value(json_object_get(files, "not_kept_before")));
	if (json_string_value(json_object_get(files, "error_before")))
		sb_buf_printf(&b, "\nThe last call's changes were NOT saved: %s",
			      json_string_value(json_object_get(files, "error_before")));
	if (json_string_value(json_object_get(files, "error")))
		sb_buf_printf(&b, "\nThe workspace's files were NOT saved: %s", json_string_value(json_object_get(files, "error")));
	if (e) {
		struct sb_error err = {0};
		sb_fail(&err, "%s", b.data ? b.data : e);
		sb_tools_error(ctx, out, &err);
		json_decref(out->structured);
		out->structured = rep;
		return;
	}
	sb_tools_ok(ctx, out, b.data ? b.data : "saved", rep);
}

void sb_workspace_list_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			       struct sb_tool_result *out)
{
	(void)t, (void)args;
	struct sb_sessions *ss = sb_tools_sessions(ctx, out);
	char client[SB_WS_CLIENT_MAX];
	struct sb_error err = {0};
	if (!ss)
		return;
	if (sb_tools_ws_client(ctx, client, sizeof client, &err)) {
		sb_tools_error(ctx, out, &err);
		return;
	}
	json_t *o = sb_workspace_list(ss, client);
	json_t *list = json_object_get(o, "workspaces");
	SB_AUTO_BUF b = {0};
	if (!json_array_size(list))
		sb_buf_printf(&b, "No workspaces kept yet: session_open {lang, workspace: \"NAME\"} makes one.");
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v) {
		sb_buf_printf(&b, "%s%s: ", i ? "\n" : "", json_string_value(json_object_get(v, "name")));
		size_text(&b, (uint64_t)json_integer_value(json_object_get(v, "bytes")));
		sb_buf_printf(&b, ", %lld files and directories, ", (long long)json_integer_value(json_object_get(v, "entries")));
		age_text(&b, (long long)json_integer_value(json_object_get(v, "last_used")));
		json_t *held = json_object_get(v, "held_by");
		const char *sid = json_string_value(json_object_get(held, "session"));
		if (json_is_object(held))
			sb_buf_printf(&b, ", open in %s%s", sid && *sid ? "session " : "another session", sid ? sid : "");
		if (json_is_object(json_object_get(v, "state")))
			sb_buf_printf(&b, ", saved variables");
	}
	sb_buf_printf(&b, "\nCaps: ");
	size_text(&b, (uint64_t)json_integer_value(json_object_get(o, "workspace_size_bytes")));
	sb_buf_printf(&b, " per workspace, ");
	size_text(&b, (uint64_t)json_integer_value(json_object_get(o, "workspaces_total_bytes")));
	sb_buf_printf(&b, " for all of yours (");
	size_text(&b, (uint64_t)json_integer_value(json_object_get(o, "used_bytes")));
	sb_buf_printf(&b, " used).");
	sb_tools_ok(ctx, out, b.data ? b.data : "", o);
}
