/* What the session, file, job and workspace tools' handlers share: the
 * runner's sessions (or the error when there are none), a handle on one
 * of the client's own sessions or jobs, errors a model can act on, results
 * with their structured part, and descriptions as formatted text. Below
 * every handler, so each tool's file calls this one and none another. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
