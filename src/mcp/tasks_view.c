#include "mcp/tasks_view.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/buf.h"

/* ISO 8601 in UTC with milliseconds: 2026-11-25T17:40:24.123Z. */
static json_t *iso(uint64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char buf[40], out[48];
	if (!gmtime_r(&s, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(buf, sizeof buf, "1970-01-01T00:00:00");
	snprintf(out, sizeof out, "%s.%03uZ", buf, (unsigned)(ms % 1000));
	return json_string(out);
}

json_t *sb_task_json(const struct sb_task_facts *f, bool modern, bool detailed)
{
	json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:I, s:I}", "taskId", f->id, "status", f->status, "createdAt",
			      iso(f->created_ms), "lastUpdatedAt", iso(f->updated_ms), modern ? "ttlMs" : "ttl",
			      (json_int_t)f->ttl_ms, modern ? "pollIntervalMs" : "pollInterval",
			      (json_int_t)SB_TASK_POLL_MS);
	if (o && f->message && *f->message)
		json_object_set_new(o, "statusMessage", json_string(f->message));
	if (o && modern && detailed) {
		if (!strcmp(f->status, "completed") && f->result) {
			/* What tools/call would have returned, which in this era says so. */
			json_t *r = json_deep_copy(f->result);
			json_object_set_new(r, "resultType", json_string("complete"));
			json_object_set_new(o, "result", r);
		}
		else if (!strcmp(f->status, "failed") && f->error)
			json_object_set_new(o, "error", json_deep_copy(f->error));
	}
	return o;
}

static json_t *int_or_null(const json_t *v)
{
	return json_is_integer(v) ? json_integer(json_integer_value(v)) : json_null();
}

json_t *sb_task_job_result(const json_t *st, const json_t *out, size_t cut)
{
	const char *id = json_string_value(json_object_get(st, "job_id"));
	const char *state = json_string_value(json_object_get(st, "state"));
	const char *error = json_string_value(json_object_get(st, "error"));
	const json_t *sig = json_object_get(st, "signal");
	json_int_t runtime = json_integer_value(json_object_get(st, "runtime_ms"));
	json_int_t total = json_integer_value(json_object_get(st, "output_bytes"));
	const char *text = out ? json_string_value(json_object_get(out, "output")) : NULL;
	size_t len = out ? json_string_length(json_object_get(out, "output")) : 0;
	json_int_t next = out ? json_integer_value(json_object_get(out, "next_offset")) : 0;
	bool ok = state && !strcmp(state, "done");
	char signame[24] = "";
	if (json_is_integer(sig)) {
		const char *abbrev = sigabbrev_np((int)json_integer_value(sig));
		snprintf(signame, sizeof signame, "SIG%s", abbrev ? abbrev : "?");
	}

	/* The shape of a run tool's structuredContent (its output schema),
	 * with stdout and stderr together as the job log keeps them. */
	json_t *sc = json_pack("{s:b, s:o, s:o, s:b, s:b, s:b, s:s%, s:s, s:I, s:I, s:s, s:I}", "ok", ok, "exit_code",
			       int_or_null(json_object_get(st, "exit_code")), "signal",
			       signame[0] ? json_string(signame) : json_null(), "timed_out",
			       state && !strcmp(state, "timed_out"), "output_limit_exceeded",
			       error && strstr(error, "wrote more than"), "cancelled", state && !strcmp(state, "cancelled"),
			       "stdout", text ? text : "", text ? len : 0, "stderr", "", "duration_ms", runtime,
			       "timeout_seconds", json_integer_value(json_object_get(st, "timeout_seconds")), "job_id",
			       id ? id : "", "output_bytes", total);
	if (sc && error)
		json_object_set_new(sc, "error", json_string(error));

	SB_AUTO_BUF b = {0};
	if (text && len) {
		sb_buf_append(&b, text, len);
		if (text[len - 1] != '\n')
			sb_buf_printf(&b, "\n");
	}
	sb_buf_printf(&b, "[background job %s: %s after %.1f s", id ? id : "?", state ? state : "?",
		      (double)runtime / 1000);
	if (json_is_integer(json_object_get(st, "exit_code")))
		sb_buf_printf(&b, ", exit status %lld", (long long)json_integer_value(json_object_get(st, "exit_code")));
	if (signame[0])
		sb_buf_printf(&b, ", killed by signal %s", signame);
	if (error)
		sb_buf_printf(&b, " (%s)", error);
	sb_buf_printf(&b, "; %lld bytes of output, stdout and stderr together", (long long)total);
	if (next < total)
		sb_buf_printf(&b, "; only the first %lld are shown (at most %zu): read on with job_output, job_id %s, "
				  "offset %lld", (long long)next, cut, id ? id : "?", (long long)next);
	sb_buf_printf(&b, "]");
	json_t *content = json_pack("[{s:s, s:s%}]", "type", "text", "text", b.data ? b.data : "", b.len);
	return json_pack("{s:o, s:b, s:o}", "content", content ? content : json_array(), "isError", !ok,
			 "structuredContent", sc ? sc : json_object());
}
