/* job_start, job_status, job_output, job_cancel: computations that run in
 * the background, longer than a client waits for one call, while the model
 * does other work. The work is the runner's (runner/jobs/jobs.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/sessions.h"
#include "util/buf.h"

/* job_output's page. */
#define PAGE_BYTES (64u << 10)


char *sb_job_start_description(const struct sb_config *cfg)
{
	return sb_tools_printed("Start code as a background job and return its job_id at once: for computations that take "
		       "longer than a call should (over a minute or so), or that you want to run while you do other "
		       "work. Check it with job_status, read its output with job_output (paged by offset), stop it "
		       "with job_cancel. With session_id it runs in that session's sandbox as a copy of the "
		       "session's interpreter: it sees the session's variables and files as they are now, its own "
		       "changes to variables stay in the job (files it writes in /work are shared), and the session "
		       "takes calls meanwhile. Without session_id it runs in a fresh sandbox. Jobs run for at most "
		       "timeout_seconds (default and most: %u), at most %u of yours at once (%u of all clients "
		       "together), and end when their session closes or sagebox stops. Print progress: the output "
		       "is kept as it comes.",
		       cfg->job_timeout_s, cfg->max_jobs, cfg->max_jobs_total);
}

char *sb_job_status_description(const struct sb_config *cfg)
{
	(void)cfg;
	return sb_tools_printed("A background job's state (queued, running, done, failed, timed_out, cancelled), its "
		       "running time, exit status, and the last lines of its output.");
}

char *sb_job_output_description(const struct sb_config *cfg)
{
	(void)cfg;
	return sb_tools_printed("A background job's output (stdout and stderr as they came), up to 64 KiB from offset "
		       "(default 0). The result gives next_offset: pass it to read on, also while the job still "
		       "runs.");
}

char *sb_job_cancel_description(const struct sb_config *cfg)
{
	(void)cfg;
	return sb_tools_printed("Stop a background job: its processes are killed. Its output so far stays readable.");
}

char *sb_job_timeout_description(const struct sb_config *cfg)
{
	return sb_tools_printed("Wall-clock limit in seconds, 1 to %u (the job_timeout setting). Default: %u.",
		       cfg->job_timeout_s, cfg->job_timeout_s);
}

void sb_job_start_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			  struct sb_tool_result *out)
{
	(void)t;
	struct sb_error err = {0};
	const struct sb_config *cfg = ctx->srv->cfg;
	long long timeout = sb_tool_arg_int(args, "timeout_seconds", cfg->job_timeout_s);
	if (timeout > cfg->job_timeout_s) {
		sb_fail(&err, "timeout_seconds is %lld; a job may run at most %u s here (the job_timeout setting)",
			timeout, cfg->job_timeout_s);
		sb_hint(&err, "pass a timeout_seconds of at most %u", cfg->job_timeout_s);
		sb_tools_error(ctx, out, &err);
		return;
	}
	ctx->audit->timeout_s = (unsigned)timeout;
	const char *sid = sb_tool_arg_text(args, "session_id", NULL);
	struct sb_job job = {.kind = SB_JOB_BACKGROUND, .owner = ctx->owner, .session = sid, .limits = cfg->limits};
	sb_lang_parse(sb_tool_arg_text(args, "lang", NULL), &job.lang);
	job.code = sb_tool_arg_text(args, "code", &job.code_len);
	job.limits.timeout_s = (unsigned)timeout;
	struct sb_run_out ro = {0};
	if (!ctx->srv->runner || sb_runner_run(ctx->srv->runner, &job, NULL, &ro)) {
		if (!ctx->srv->runner || ro.unusable)
			sb_tools_unusable(ctx, out, &ro.err);
		else
			sb_tools_error(ctx, out, &ro.err);
		sb_run_out_free(&ro);
		return;
	}
	sb_run_out_free(&ro);
	const char *id = ro.job_id;
	snprintf(ctx->audit->job, sizeof ctx->audit->job, "%s", id);
	char *text = sb_tools_printed("Started job %s%s%s (at most %lld s). Check it with job_status, read its output with "
			     "job_output.", id, sid ? " in session " : "", sid ? sid : "", timeout);
	sb_tools_ok(ctx, out, text ? text : id,
		    json_pack("{s:s, s:s, s:I}", "job_id", id, "state", "queued", "timeout_seconds", (json_int_t)timeout));
	free(text);
}

void sb_job_status_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			   struct sb_tool_result *out)
{
	(void)t;
	struct sb_tools_handle h;
	if (!sb_tools_handle(ctx, args, "job_id", &h, out))
		return;
	json_t *st = sb_job_status(h.ss, ctx->owner, h.id, &h.err);
	if (sb_tools_handle_failed(ctx, out, &h, !st))
		return;
	SB_AUTO_BUF b = {0};
	sb_buf_printf(&b, "job %s: %s after %.1f s", json_string_value(json_object_get(st, "job_id")),
		      json_string_value(json_object_get(st, "state")),
		      (double)json_integer_value(json_object_get(st, "runtime_ms")) / 1000);
	if (json_is_integer(json_object_get(st, "exit_code")))
		sb_buf_printf(&b, ", exit status %lld", (long long)json_integer_value(json_object_get(st, "exit_code")));
	if (json_is_integer(json_object_get(st, "signal")))
		sb_buf_printf(&b, ", killed by signal %lld", (long long)json_integer_value(json_object_get(st, "signal")));
	if (json_object_get(st, "error"))
		sb_buf_printf(&b, " (%s)", json_string_value(json_object_get(st, "error")));
	sb_buf_printf(&b, "; %lld bytes of output", (long long)json_integer_value(json_object_get(st, "output_bytes")));
	if (json_object_get(st, "output_note"))
		sb_buf_printf(&b, " (%s)", json_string_value(json_object_get(st, "output_note")));
	const char *last = json_string_value(json_object_get(st, "last_output"));
	if (last && *last)
		sb_buf_printf(&b, "; the last of it:\n%s", last);
	sb_tools_ok(ctx, out, b.data ? b.data : "", st);
}

void sb_job_output_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			   struct sb_tool_result *out)
{
	(void)t;
	struct sb_tools_handle h;
	if (!sb_tools_handle(ctx, args, "job_id", &h, out))
		return;
	uint64_t offset = (uint64_t)sb_tool_arg_int(args, "offset", 0);
	json_t *o = sb_job_output(h.ss, ctx->owner, h.id, offset, PAGE_BYTES, &h.err);
	if (sb_tools_handle_failed(ctx, out, &h, !o))
		return;
	json_int_t next = json_integer_value(json_object_get(o, "next_offset"));
	json_int_t end = json_integer_value(json_object_get(o, "end_offset"));
	json_int_t dropped = json_integer_value(json_object_get(o, "dropped_bytes"));
	const char *state = json_string_value(json_object_get(o, "state"));
	bool running = !strcmp(state, "running") || !strcmp(state, "queued");
	SB_AUTO_BUF b = {0};
	if (dropped)
		sb_buf_printf(&b, "[the %lld bytes before offset %lld are no longer kept: a job's log keeps its last "
				  "8 MiB]\n", (long long)dropped, (long long)(offset + (uint64_t)dropped));
	sb_buf_printf(&b, "%s", json_string_value(json_object_get(o, "output")));
	if (b.len && b.data[b.len - 1] != '\n')
		sb_buf_printf(&b, "\n");
	sb_buf_printf(&b, "[output bytes %lld to %lld of %lld so far; the job is %s%s]", (long long)offset + dropped,
		      (long long)next, (long long)end, state,
		      next < end ? ": call job_output again with offset set to next_offset for more"
		      : running ? ": more may come, call job_output again later with offset set to next_offset"
				: "");
	sb_tools_ok(ctx, out, b.data ? b.data : "", o);
}

void sb_job_cancel_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			   struct sb_tool_result *out)
{
	(void)t;
	struct sb_tools_handle h;
	if (!sb_tools_handle(ctx, args, "job_id", &h, out) ||
	    sb_tools_handle_failed(ctx, out, &h, sb_job_cancel(h.ss, ctx->owner, h.id, &h.err)))
		return;
	sb_tools_ok(ctx, out, "Cancelling: the job's processes are being killed; job_status shows when it has ended.",
		    json_pack("{s:s, s:b}", "job_id", h.id, "cancelling", 1));
}
