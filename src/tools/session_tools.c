/* session_open, session_list, session_reset, session_close, and what the
 * session, file and job tools share: errors a model can act on, results
 * with their structured part. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "tools/sessions.h"
#include "util/buf.h"

void sb_tools_unusable(struct sb_tool_ctx *ctx, struct sb_tool_result *out, struct sb_error *err)
{
	if (!ctx->srv->runner)
		*err = ctx->srv->runner_err;
	if (!err->msg[0])
		sb_fail(err, "the sandbox is not usable here");
	if (!err->hint[0])
		sb_hint(err, "call sandbox_status and tell the user what it reports");
	sb_tools_error(ctx, out, err);
}

struct sb_sessions *sb_tools_sessions(struct sb_tool_ctx *ctx, struct sb_tool_result *out)
{
	struct sb_error err = {0};
	struct sb_sessions *ss = ctx->srv->runner ? sb_runner_sessions(ctx->srv->runner, &err) : NULL;
	if (!ss)
		sb_tools_unusable(ctx, out, &err);
	return ss;
}

bool sb_tools_handle(struct sb_tool_ctx *ctx, const json_t *args, const char *key, struct sb_tools_handle *h,
		     struct sb_tool_result *out)
{
	*h = (struct sb_tools_handle){0};
	if (!(h->ss = sb_tools_sessions(ctx, out)))
		return false;
	h->id = sb_tool_arg_text(args, key, NULL);
	return true;
}

bool sb_tools_handle_failed(struct sb_tool_ctx *ctx, struct sb_tool_result *out, const struct sb_tools_handle *h,
			    bool failed)
{
	if (failed)
		sb_tools_error(ctx, out, &h->err);
	return failed;
}

void sb_tools_error(struct sb_tool_ctx *ctx, struct sb_tool_result *out, const struct sb_error *err)
{
	SB_AUTO_BUF b = {0};
	sb_buf_printf(&b, "%s%s%s", err->msg, err->hint[0] ? "\n" : "", err->hint);
	sb_tool_result_text(out, b.data ? b.data : err->msg);
	out->is_error = true;
	out->structured = json_pack("{s:s, s:s}", "error", err->msg, "hint", err->hint);
	snprintf(ctx->audit->verdict, sizeof ctx->audit->verdict, "error: %.480s", err->msg);
	ctx->audit->ok = false;
}

void sb_tools_ok(struct sb_tool_ctx *ctx, struct sb_tool_result *out, const char *text, json_t *structured)
{
	sb_tool_result_text(out, text);
	out->structured = structured;
	snprintf(ctx->audit->verdict, sizeof ctx->audit->verdict, "ok");
	ctx->audit->ok = true;
}

/* Open to additions (no additionalProperties: false): a new field never
 * breaks a client that validates structuredContent. */
json_t *sb_tools_open_schema(void)
{
	return json_pack("{s:s}", "type", "object");
}

/* ---- descriptions */
/* A description as formatted text (malloc'd; NULL if out of memory). */
char *sb_tools_printed(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

char *sb_session_open_description(const struct sb_config *cfg)
{
	return sb_tools_printed(
		"Open a session: a sandbox of its own whose interpreter keeps its state between calls. Pass the "
		"returned session_id to run_sagemath, run_python or run_shell, and variables, rings, functions, "
		"imports (Sage/Python) or the working directory and exported variables (shell) persist from one "
		"call to the next; files in its workspace /work persist too (file_write, file_read, file_list). "
		"Open one for iterative work, large objects you build once, plots and files, or background jobs "
		"(job_start with session_id); for a one-off question a call without session_id is simpler. "
		"lang is fixed: a sage session (the default) takes run_sagemath and run_python in the same "
		"interpreter, a python session run_python, a shell session run_shell. A session unused for %u "
		"minutes is closed with everything in it; at most %u of yours may be open (%u of all clients "
		"together). Close it with session_close when done.",
		cfg->session_idle_minutes, cfg->max_sessions, cfg->max_sessions_total);
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
		       "it).");
}

char *sb_session_id_description(const struct sb_config *cfg)
{
	return sb_tools_printed("A session from session_open: run the code in it, where earlier calls' variables and "
		       "files are kept (it expires after %u minutes unused). Omit for a fresh, stateless call.",
		       cfg->session_idle_minutes);
}

/* ---- handlers */
void sb_session_open_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			     struct sb_tool_result *out)
{
	(void)t;
	struct sb_sessions *ss = sb_tools_sessions(ctx, out);
	if (!ss)
		return;
	enum sb_lang lang = SB_LANG_SAGE;
	const char *l = sb_tool_arg_text(args, "lang", NULL);
	if (l)
		sb_lang_parse(l, &lang);
	struct sb_session_opened o;
	struct sb_error err = {0};
	if (sb_session_open(ss, ctx->owner, lang, &o, &err)) {
		sb_tools_error(ctx, out, &err);
		return;
	}
	snprintf(ctx->audit->session, sizeof ctx->audit->session, "%s", o.id);
	char *text = sb_tools_printed("Opened %s session %s. Pass session_id \"%s\" to %s; its workspace is /work (the "
			     "working directory). It closes after %u minutes unused; close it with session_close when "
			     "done.",
			     sb_lang_name(lang), o.id, o.id,
			     lang == SB_LANG_SAGE ? "run_sagemath (or run_python)" : lang == SB_LANG_PYTHON ? "run_python"
											     : "run_shell",
			     o.idle_expiry_s / 60);
	sb_tools_ok(ctx, out, text ? text : o.id,
		    json_pack("{s:s, s:s, s:s, s:I}", "session_id", o.id, "lang", sb_lang_name(lang), "workspace",
			      SB_SANDBOX_WORKSPACE, "idle_expiry_s", (json_int_t)o.idle_expiry_s));
	free(text);
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
