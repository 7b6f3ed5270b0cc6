/* One job on a warm worker, host side: send the code, relay the output into
 * the same head+tail captures the fresh path uses, and hold the worker to
 * the host's own deadline, caps and cancellation. The worker is not
 * trusted: a frame out of order, for another job, or malformed, or the
 * worker dying, kills its whole sandbox. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/capture.h"
#include "runner/progress.h"
#include "runner/fresh.h"
#include "runner/worker.h"
#include "util/clock.h"
#include "util/fd.h"

/* The host's deadline is the job's timeout plus this: the worker enforces
 * the timeout itself and needs a moment to kill the job and report. */
#define HOST_GRACE_MS 2000
/* After a cancel (or a flood), how long the worker may take to confirm
 * before the whole sandbox is killed. */
#define CANCEL_GRACE_MS 1500
/* After the sandbox was killed, how long to wait for its pipes to close. */
#define KILL_GRACE_MS 3000

struct wjob {
	struct sb_worker *w;
	const struct sb_job *job;
	const struct sb_run_hooks *hooks;
	struct sb_capture out, err;
	struct sb_buf tx;
	size_t tx_off;
	json_int_t id;
	uint64_t start, deadline, cancel_deadline, killed_at, next_progress;
	bool started, done, killed, timed_out, flooded, cancelled, retry;
	char broken[700];
	/* from the done frame */
	int exit_code, signal;
	bool w_timed_out, w_cancelled, w_flooded;
};

static void kill_worker(struct wjob *j)
{
	if (!j->killed) {
		sb_worker_kill(j->w);
		j->killed = true;
		j->killed_at = sb_now_ms();
	}
}

static void broke(struct wjob *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void broke(struct wjob *j, const char *fmt, ...)
{
	if (!j->broken[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(j->broken, sizeof j->broken, fmt, ap);
		va_end(ap);
	}
	kill_worker(j);
}

static void send_cancel(struct wjob *j)
{
	if (j->cancel_deadline)
		return;
	json_t *h = json_pack("{s:s, s:I}", "type", "cancel", "id", j->id);
	if (!h || sb_wp_encode(&j->tx, h, NULL, 0))
		kill_worker(j);
	json_decref(h);
	j->cancel_deadline = sb_now_ms() + CANCEL_GRACE_MS;
}

static bool get_int(json_t *h, const char *k, int lo, int hi, int *out)
{
	json_t *v = json_object_get(h, k);
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return false;
	*out = (int)json_integer_value(v);
	return true;
}

static bool get_bool(json_t *h, const char *k, bool *out)
{
	json_t *v = json_object_get(h, k);
	if (!json_is_boolean(v))
		return false;
	*out = json_is_true(v);
	return true;
}

static void on_frame(struct wjob *j, const struct sb_wp_frame *f)
{
	json_t *idv = json_object_get(f->hdr, "id");
	if (!json_is_integer(idv) || json_integer_value(idv) != j->id) {
		broke(j, "the warm worker broke the protocol (%s)", "a frame for another job");
		return;
	}
	switch (f->type) {
	case SB_WP_STARTED:
		if (j->started)
			broke(j, "the warm worker broke the protocol (%s)", "started twice");
		j->started = true;
		return;
	case SB_WP_OUT: {
		const char *s = json_string_value(json_object_get(f->hdr, "stream"));
		struct sb_capture *c = !s ? NULL : !strcmp(s, "stdout") ? &j->out : !strcmp(s, "stderr") ? &j->err : NULL;
		if (!c || !j->started) {
			broke(j, "the warm worker broke the protocol (%s)", "a bad output frame");
			return;
		}
		sb_capture_add(c, f->payload, f->payload_len);
		/* The host's own flood limit, whatever the worker does. */
		if (c->total > (uint64_t)c->cap * SB_FLOOD_FACTOR && !j->flooded) {
			j->flooded = true;
			send_cancel(j);
		}
		return;
	}
	case SB_WP_DONE:
		if (!j->started || !get_int(f->hdr, "exit_code", -1, 255, &j->exit_code) ||
		    !get_int(f->hdr, "signal", 0, 127, &j->signal) || !get_bool(f->hdr, "timed_out", &j->w_timed_out) ||
		    !get_bool(f->hdr, "cancelled", &j->w_cancelled) || !get_bool(f->hdr, "flooded", &j->w_flooded)) {
			broke(j, "the warm worker broke the protocol (%s)", "a malformed done frame");
			return;
		}
		j->done = true;
		if (json_object_get(f->hdr, "trace")) {
			char *t = json_dumps(json_object_get(f->hdr, "trace"), JSON_COMPACT);
			fprintf(stderr, "sagebox: warm trace: host %llu ms: %s\n", (unsigned long long)(sb_now_ms() - j->start), t ? t : "");
			free(t);
		}
		return;
	case SB_WP_READY:
		break;
	}
	broke(j, "the warm worker broke the protocol (%s)", "an unexpected frame");
}

static void report_progress(struct wjob *j, uint64_t now)
{
	sb_progress_maybe_report(j->hooks, &j->next_progress, j->start, now, &j->out, &j->err);
}

static void flush_tx(struct wjob *j)
{
	struct sb_sandbox *sb = &j->w->sb;
	while (j->tx_off < j->tx.len && sb->stdin_fd >= 0) {
		ssize_t n = write(sb->stdin_fd, j->tx.data + j->tx_off, j->tx.len - j->tx_off);
		if (n > 0) {
			j->tx_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		/* EPIPE: the worker is gone; its stdout's EOF says the rest. */
		sb_close(&sb->stdin_fd);
		return;
	}
	if (j->tx_off == j->tx.len)
		j->tx.len = j->tx_off = 0;
}

static void loop(struct wjob *j)
{
	struct sb_sandbox *sb = &j->w->sb;
	int cancel_fd = j->hooks ? j->hooks->cancel_fd : -1;
	char why[256];
	for (;;) {
		struct sb_wp_frame f;
		int r;
		while (!j->killed && !j->done && (r = sb_wp_reader_next(&j->w->rd, &f, why, sizeof why)) != 0) {
			if (r < 0)
				broke(j, "the warm worker broke the protocol (%s)", why);
			else
				on_frame(j, &f);
		}
		if (j->done)
			return;
		uint64_t now = sb_now_ms();
		if (j->killed && (sb->stdout_fd < 0 || now >= j->killed_at + KILL_GRACE_MS))
			return;
		if (!j->killed && sb->stdout_fd < 0) {
			/* The worker is gone before it reported the job. */
			if (!j->started)
				j->retry = true;
			char how[600];
			sb_worker_died_how(j->w, how, sizeof how);
			broke(j, "the warm worker died during the job (%s); it is replaced for the next job", how);
			return;
		}
		if (!j->killed && now >= j->deadline) {
			j->timed_out = true;
			kill_worker(j);
		}
		if (!j->killed && j->cancel_deadline && now >= j->cancel_deadline)
			kill_worker(j);
		report_progress(j, now);

		struct pollfd p[4];
		int n = 0, i_in = -1, i_out = -1, i_err = -1, i_cancel = -1;
		if (sb->stdin_fd >= 0 && j->tx_off < j->tx.len) { i_in = n; p[n++] = (struct pollfd){sb->stdin_fd, POLLOUT, 0}; }
		if (sb->stdout_fd >= 0) { i_out = n; p[n++] = (struct pollfd){sb->stdout_fd, POLLIN, 0}; }
		if (sb->stderr_fd >= 0) { i_err = n; p[n++] = (struct pollfd){sb->stderr_fd, POLLIN, 0}; }
		if (cancel_fd >= 0 && !j->cancelled && !j->killed) { i_cancel = n; p[n++] = (struct pollfd){cancel_fd, POLLIN, 0}; }
		uint64_t wake = j->killed ? j->killed_at + KILL_GRACE_MS : j->deadline;
		if (!j->killed && j->cancel_deadline && j->cancel_deadline < wake)
			wake = j->cancel_deadline;
		if (j->hooks && j->hooks->progress && j->next_progress < wake)
			wake = j->next_progress;
		int rc = poll(p, (nfds_t)n, wake > now ? (int)(wake - now) : 0);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			broke(j, "poll failed: %s", strerror(errno));
			return;
		}
		if (i_in >= 0 && p[i_in].revents)
			flush_tx(j);
		if (i_out >= 0 && p[i_out].revents && sb_worker_read(j->w) < 0)
			broke(j, "%s", "out of memory reading the warm worker");
		if (i_err >= 0 && p[i_err].revents)
			sb_worker_drain_diag(j->w);
		if (i_cancel >= 0 && p[i_cancel].revents) {
			j->cancelled = true;
			send_cancel(j);
			flush_tx(j);
		}
	}
}

/* The backend's verified report of the worker's sandbox, with what warm
 * isolation changes: the job's memory limit and how it is held to it. */
static json_t *sandbox_json(const struct sb_worker *w)
{
	json_t *o = w->sb.enforced ? json_deep_copy(w->sb.enforced) : json_object();
	const char *job_mem = w->job_limits.memory;
	const char *note = "warm: the job is a fork of a warm worker; RLIMIT_DATA lets it add at most this "
			   "much private memory to the worker's pages it shares, and the worker's sandbox as a "
			   "whole is held to worker_sandbox_limit";
	json_t *mem = json_object_get(o, "memory");
	json_t *lim = json_object_get(json_object_get(o, "limits"), "memory");
	if (json_is_object(mem) && json_object_get(mem, "limit")) {
		json_object_set_new(mem, "worker_sandbox_limit", json_copy(json_object_get(mem, "limit")));
		json_object_set_new(mem, "limit", json_string(job_mem));
		json_object_set_new(mem, "warm_note", json_string(note));
	} else if (json_is_object(lim) && json_object_get(lim, "value")) {
		json_object_set_new(lim, "worker_sandbox_limit", json_copy(json_object_get(lim, "value")));
		json_object_set_new(lim, "value", json_string(job_mem));
		json_object_set_new(lim, "warm_note", json_string(note));
	}
	json_t *warm = json_pack("{s:s, s:i, s:s, s:s}", "worker", sb_wkind_name(w->kind), "worker_jobs", (int)w->jobs,
				 "worker_pid_inside", w->pid_inside, "per_job",
				 "forked child: own session, rlimits, fresh work dir, fresh globals; its processes "
				 "are killed when it ends");
	json_object_set_new(o, "warm", warm);
	return o;
}

enum sb_wrun sb_worker_run(struct sb_worker *w, const struct sb_job *job, const struct sb_run_hooks *hooks,
			   struct sb_result *res)
{
	struct wjob j = {.w = w, .job = job, .hooks = hooks, .id = ++w->next_id};
	j.start = sb_now_ms();
	j.deadline = j.start + (uint64_t)job->limits.timeout_s * 1000 + HOST_GRACE_MS;
	j.next_progress = j.start + (hooks && hooks->progress_interval_ms ? hooks->progress_interval_ms : 2000);
	if (sb_captures_init(&j.out, &j.err, job->limits.output_bytes)) {
		res->internal_error = strdup("out of memory");
		return SB_WRUN_OK;
	}
	json_t *h = json_pack("{s:s, s:I, s:s, s:I, s:I, s:{s:I, s:I, s:I}}", "type", "run", "id", j.id, "lang",
			      sb_lang_name(job->lang), "timeout_ms", (json_int_t)job->limits.timeout_s * 1000,
			      "max_output", (json_int_t)job->limits.output_bytes * SB_FLOOD_FACTOR, "limits",
			      "memory_bytes", (json_int_t)job->limits.memory_bytes, "nofile",
			      (json_int_t)job->limits.nofile, "fsize_bytes", (json_int_t)job->limits.fsize_bytes);
	if (h && getenv("SAGEBOX_WARM_TRACE"))
		json_object_set_new(h, "trace", json_true());
	/* Protocol v2: the code follows the frame as code_bytes raw bytes, so
	 * that the worker can splice it into the job's pipe without ever
	 * holding it (a later job's child, a fork of the worker, would
	 * inherit it: issue 13.1). */
	if (h)
		json_object_set_new(h, "code_bytes", json_integer((json_int_t)job->code_len));
	if (!h || sb_wp_encode(&j.tx, h, NULL, 0) || sb_buf_append(&j.tx, job->code, job->code_len)) {
		json_decref(h);
		snprintf(j.broken, sizeof j.broken, "out of memory");
	} else {
		json_decref(h);
		flush_tx(&j);
		loop(&j);
	}
	enum sb_wrun rc = SB_WRUN_OK;
	if (j.retry && !j.started) {
		rc = SB_WRUN_RETRY;
	} else if (j.done && !j.killed) {
		res->exit_code = j.exit_code;
		res->signal = j.signal;
		res->timed_out = j.w_timed_out;
		res->output_limit_exceeded = j.flooded || j.w_flooded;
		res->cancelled = j.cancelled;
	} else {
		rc = SB_WRUN_BROKEN;
		res->exit_code = -1;
		res->timed_out = j.timed_out;
		res->output_limit_exceeded = j.flooded;
		res->cancelled = j.cancelled;
		/* The host's own deadline, cancel or flood kill is a verdict;
		 * anything else is the sandbox failing, said as such. */
		if (!j.timed_out && !j.cancelled && !j.flooded)
			res->internal_error = strdup(j.broken[0] ? j.broken : "the warm worker stopped answering");
	}
	sb_result_forget_own_kill(res);
	if (rc != SB_WRUN_RETRY) {
		sb_captures_finish(&j.out, &j.err, res);
		res->sandbox = sandbox_json(w);
	} else {
		sb_captures_free(&j.out, &j.err);
	}
	sb_buf_free(&j.tx);
	return rc;
}
