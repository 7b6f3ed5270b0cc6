#include "core/result.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/display_kinds.h"
#include "core/display_out.h"
#include "core/exit_status.h"
#include "util/utf8.h"

void sb_result_init(struct sb_result *r)
{
	memset(r, 0, sizeof *r);
	r->exit_code = -1;
	sb_display_init(&r->display);
}

void sb_result_free(struct sb_result *r)
{
	free(r->out.data);
	free(r->err.data);
	free(r->internal_error);
	free(r->hint);
	json_decref(r->sandbox);
	json_decref(r->written);
	sb_display_free(&r->display);
	sb_result_init(r);
}

bool sb_result_ok(const struct sb_result *r)
{
	return !r->internal_error && !r->timed_out && !r->output_limit_exceeded &&
	       !r->cancelled && r->signal == 0 && r->exit_code == 0;
}

void sb_result_forget_own_kill(struct sb_result *r)
{
	if ((r->timed_out || r->output_limit_exceeded || r->cancelled) && r->signal == SIGKILL)
		r->signal = 0;
}

int sb_result_exit_status(const struct sb_result *r)
{
	if (r->internal_error)
		return SB_EXIT_SANDBOX;
	if (r->timed_out)
		return SB_EXIT_TIMEOUT;
	if (r->signal)
		return SB_EXIT_SIGNAL_BASE + r->signal;
	if (r->exit_code >= 0)
		return r->exit_code;
	return SB_EXIT_SANDBOX;
}

static json_t *stream_string(const struct sb_stream *s)
{
	/* jansson refuses invalid UTF-8; the code may print anything, so bytes
	 * that are not UTF-8 were already replaced by the runner (U+FFFD). */
	json_t *j = json_stringn(s->data ? s->data : "", s->len);
	return j ? j : json_string("[output was not valid UTF-8]");
}

json_t *sb_result_to_json(const struct sb_result *r)
{
	const char *sig = r->signal ? sigabbrev_np(r->signal) : NULL;
	char signame[32] = "";
	if (sig)
		snprintf(signame, sizeof signame, "SIG%s", sig);
	json_t *o = json_object();
	json_object_set_new(o, "ok", json_boolean(sb_result_ok(r)));
	json_object_set_new(o, "exit_code", r->exit_code >= 0 ? json_integer(r->exit_code) : json_null());
	json_object_set_new(o, "signal", r->signal ? json_string(signame) : json_null());
	json_object_set_new(o, "timed_out", json_boolean(r->timed_out));
	json_object_set_new(o, "output_limit_exceeded", json_boolean(r->output_limit_exceeded));
	json_object_set_new(o, "cancelled", json_boolean(r->cancelled));
	json_object_set_new(o, "out_of_memory", json_boolean(r->out_of_memory));
	json_object_set_new(o, "stdout", stream_string(&r->out));
	json_object_set_new(o, "stderr", stream_string(&r->err));
	json_object_set_new(o, "truncated",
			    json_pack("{s:b, s:b, s:I, s:I, s:I}", "stdout", r->out.truncated,
				      "stderr", r->err.truncated, "max_bytes_per_stream",
				      (json_int_t)r->max_bytes_per_stream, "stdout_total_bytes",
				      (json_int_t)r->out.total_bytes, "stderr_total_bytes",
				      (json_int_t)r->err.total_bytes));
	json_object_set_new(o, "duration_ms", json_integer((json_int_t)r->duration_ms));
	json_object_set_new(o, "timeout_seconds", json_integer(r->timeout_s));
	if (r->internal_error) {
		json_object_set_new(o, "error", json_string(r->internal_error));
		if (r->hint)
			json_object_set_new(o, "hint", json_string(r->hint));
	}
	sb_display_to_json(&r->display, o);
	if (r->n_net_refused) {
		json_t *a = json_array();
		for (unsigned i = 0; i < r->n_net_refused; i++) {
			const struct sb_net_refusal *x = &r->net_refused[i];
			json_array_append_new(a, json_pack("{s:s, s:s, s:i, s:i, s:s}", "sandbox", x->sandbox, "host",
							   x->host, "port", (int)x->port, "status", (int)x->status, "why",
							   x->why));
		}
		json_object_set_new(o, "network_refused", a);
		if (r->net_refused_more)
			json_object_set_new(o, "network_refused_more", json_integer(r->net_refused_more));
	}
	json_object_set(o, "sandbox", r->sandbox ? r->sandbox : json_null());
	return o;
}

/* snprintf that never cuts a character in two: a sandbox error may be long
 * and hold any text, and a verdict cut inside a character is not UTF-8 (the
 * tool's text block and the audit line could then not carry it). */
__attribute__((format(printf, 3, 4))) static void put(char *buf, size_t size, const char *fmt, ...)
{
	char *full = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&full, fmt, ap);
	va_end(ap);
	if (!size) {
		free(full);
		return;
	}
	size_t k = n < 0 ? 0 : sb_utf8_prefix(full, (size_t)n, size - 1);
	if (k)
		memcpy(buf, full, k);
	buf[k] = '\0';
	free(full);
}

void sb_result_verdict(const struct sb_result *r, char *buf, size_t size)
{
	const char *extra = r->output_limit_exceeded ? " (output limit exceeded: sandbox stopped)" : "";
	if (r->internal_error)
		put(buf, size, "sandbox error: %s", r->internal_error);
	else if (r->cancelled)
		put(buf, size, "cancelled");
	else if (r->timed_out)
		put(buf, size, "timed out after %u s%s", r->timeout_s, extra);
	else if (r->output_limit_exceeded)
		put(buf, size, "stopped: output limit of %zu KiB per stream exceeded",
			 r->max_bytes_per_stream / 1024);
	else if (r->signal)
		put(buf, size, "killed by signal SIG%s%s", sigabbrev_np(r->signal) ? sigabbrev_np(r->signal) : "?",
			 r->signal == SIGKILL ? " (often the memory limit)" : "");
	else
		put(buf, size, "exit status %d", r->exit_code);
}

json_t *sb_result_interacts(const struct sb_result *r)
{
	json_t *a = json_array();
	const struct sb_display_kind *k = sb_display_kind_named("interact");
	for (size_t i = 0; a && i < r->display.n; i++)
		if (r->display.v[i].kind == k)
			json_array_append(a, r->display.v[i].value);
	return a;
}
