/* One job on a worker, host side: the supervisor's feeder for the worker's
 * frames. It sends the code in a run frame, turns out frames into output
 * (stdout, stderr and the display stream), started/done into the job's life,
 * and asks for a soft stop with a cancel frame. A warm worker enforces the
 * timeout itself (self_timed): the host's deadline is a later backstop. A
 * fresh sandbox's worker (fresh isolation) gets the job before it is ready,
 * so its ready frame may come first, and the host's deadline counts from
 * the sandbox's start, as fresh isolation always did. The worker is not
 * trusted: a frame out of order, for another job, or malformed, or the
 * worker dying, is a broken job and kills its whole sandbox. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/display_kinds.h"
#include "runner/pipes.h"
#include "runner/supervise.h"
#include "runner/warm/worker.h"
#include "util/clock.h"
#include "util/trace.h"

struct frames_feeder {
	struct sb_feeder f; /* first: the supervisor's view */
	struct sb_worker *w;
	struct sb_buf tx;
	size_t tx_off;
	struct sb_wp_job wj; /* its frames so far: wproto.h */
	bool retry;
	/* from the done frame */
	int exit_code, signal;
	bool w_timed_out, w_flooded;
};

static struct frames_feeder *ff(const struct sb_feeder *f)
{
	return (struct frames_feeder *)f;
}

static void flush_tx(struct frames_feeder *x)
{
	/* EPIPE closes stdin: the worker is gone; its stdout's EOF says the rest. */
	sb_pipe_write(&x->w->sb.stdin_fd, x->tx.data, x->tx.len, &x->tx_off);
	if (x->tx_off == x->tx.len)
		x->tx.len = x->tx_off = 0;
}

/* How messages name the far side. */
static const char *who(const struct sb_worker *w)
{
	return w->fresh ? "the sandbox's driver" : "the warm worker";
}

#define BROKE(s, what) sb_sup_broken((s), "%s broke the protocol (%s)", who(x->w), (what))

static void on_frame(struct frames_feeder *x, struct sb_sup *s, const struct sb_wp_frame *f)
{
	struct sb_wp_event ev;
	char why[128];
	if (sb_wp_job_decode(&x->wj, f, &ev, why, sizeof why)) {
		BROKE(s, why);
		return;
	}
	switch (ev.type) {
	case SB_WP_READY:
		x->w->ready = json_incref(ev.hdr);
		return;
	case SB_WP_OUT:
		sb_sup_output(s, (enum sb_stream_id)ev.stream, ev.payload, ev.payload_len);
		return;
	case SB_WP_DONE:
		x->exit_code = ev.exit_code;
		x->signal = ev.signal;
		x->w_timed_out = ev.flags & SB_WP_DONE_TIMED_OUT;
		x->w_flooded = ev.flags & SB_WP_DONE_FLOODED;
		sb_trace_stamp("done_rx");
		sb_sup_finish(s);
		if (json_object_get(ev.hdr, "trace")) {
			char *t = json_dumps(json_object_get(ev.hdr, "trace"), JSON_COMPACT);
			fprintf(stderr, "sagebox: warm trace: host %llu ms: %s\n",
				(unsigned long long)(sb_now_ms() - s->start), t ? t : "");
			free(t);
		}
		return;
	default: /* started: the decoder keeps it */
		return;
	}
}

static int ff_fds(struct sb_feeder *f, struct sb_sup *s, struct pollfd *p)
{
	struct sb_sandbox *sb = &ff(f)->w->sb;
	(void)s;
	/* Slot order is fixed (-1 is skipped by poll): ff_ready relies on it. */
	p[0] = (struct pollfd){ff(f)->tx_off < ff(f)->tx.len ? sb->stdin_fd : -1, POLLOUT, 0};
	p[1] = (struct pollfd){sb->stdout_fd, POLLIN, 0};
	p[2] = (struct pollfd){sb->stderr_fd, POLLIN, 0};
	return 3;
}

static void ff_ready(struct sb_feeder *f, struct sb_sup *s, const struct pollfd *p, int n)
{
	struct frames_feeder *x = ff(f);
	struct sb_worker *w = x->w;
	(void)n;
	if (p[0].revents)
		flush_tx(x);
	if (p[1].revents && sb_worker_read(w) < 0)
		sb_sup_broken(s, "out of memory reading %s", who(w));
	char why[256];
	struct sb_wp_frame fr;
	int r;
	while (!s->killed && !x->wj.done && (r = sb_wp_reader_next(&w->rd, &fr, why, sizeof why)) != 0) {
		if (r < 0)
			BROKE(s, why);
		else
			on_frame(x, s, &fr);
	}
	if (s->killed) {
		/* Nothing it says counts any more: read on to its EOF. */
		sb_wp_reader_free(&w->rd);
		sb_wp_reader_init(&w->rd);
	}
	if (p[2].revents)
		sb_worker_drain_diag(w);
	if (!s->killed && !x->wj.done && w->sb.stdout_fd < 0) {
		/* The worker is gone before it reported the job: a warm job is
		 * retried elsewhere; a fresh one has no elsewhere. */
		x->retry = !x->wj.started && !w->fresh;
		char how[600];
		sb_worker_died_how(w, how, sizeof how);
		s->out_of_memory = w->out_of_memory;
		sb_sup_broken(s, "%s died during the job (%s)%s", who(w), how,
			      w->fresh ? "" : "; it is replaced for the next job");
	}
}

static void ff_soft_stop(struct sb_feeder *f, struct sb_sup *s)
{
	struct frames_feeder *x = ff(f);
	json_t *h = json_pack("{s:s, s:I}", "type", "cancel", "id", x->wj.id);
	if (!h || sb_wp_encode(&x->tx, h, NULL, 0))
		sb_sup_kill(s);
	json_decref(h);
	flush_tx(x);
}

static void ff_hard_kill(struct sb_feeder *f)
{
	sb_worker_kill(ff(f)->w);
}

static bool ff_drained(const struct sb_feeder *f)
{
	return ff(f)->w->sb.stdout_fd < 0;
}

static const struct sb_feeder_ops frames_ops = {
	.fds = ff_fds,
	.ready = ff_ready,
	.soft_stop = ff_soft_stop,
	.hard_kill = ff_hard_kill,
	.drained = ff_drained,
};

/* The run frame, then the code (protocol v2): the code follows the frame
 * as code_bytes raw bytes, so that the worker can splice it into the job's
 * pipe without ever holding it (a later job's child, a fork of the worker,
 * would inherit it). The worker applies the host's policy
 * inside: the flood limits (max_output, max_display_bytes), the exit grace,
 * and the display caps the driver holds its items to (it scales and shrinks
 * figures to them). */
static int encode_run(struct frames_feeder *x, const struct sb_job *job, const struct sb_sink *sink)
{
	json_t *h = json_pack("{s:s, s:I, s:s, s:I, s:I, s:I, s:I, s:{s:I, s:I, s:I}}", "type", "run", "id", x->wj.id,
			      "lang", sb_lang_name(job->lang), "timeout_ms", (json_int_t)job->limits.timeout_s * 1000,
			      "max_output", (json_int_t)sink->flood_bytes, "exit_grace_ms",
			      (json_int_t)sb_sup_policy.exit_grace_ms, "code_bytes", (json_int_t)job->code_len, "limits",
			      "memory_bytes", (json_int_t)job->limits.memory_bytes, "nofile", (json_int_t)job->limits.nofile,
			      "fsize_bytes", (json_int_t)job->limits.fsize_bytes);
	if (h) {
		json_object_set_new(h, "max_display_bytes",
				    json_integer((json_int_t)sb_sink_flood_bytes(sink, SB_STREAM_DISPLAY)));
		json_object_set_new(h, "display", sb_display_caps_json());
	}
	if (h && sb_trace_on())
		json_object_set_new(h, "trace", json_true());
	int rc = !h || sb_wp_encode(&x->tx, h, NULL, 0) || sb_buf_append(&x->tx, job->code, job->code_len) ? -1 : 0;
	json_decref(h);
	return rc;
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
			   struct sb_sink *sink, struct sb_result *res)
{
	sb_worker_net_serves(w, job->owner, "a call", NULL);
	unsigned net_mark = sb_netproxy_mark(&w->net);
	/* A fresh worker's ready frame may come before the job starts. */
	unsigned types = SB_WP_WORKER_TYPES & ~(w->fresh && !w->ready ? 0u : 1u << SB_WP_READY);
	struct frames_feeder x = {
		.f = {.ops = &frames_ops, .self_timed = !w->fresh},
		.w = w,
		.wj = {.id = ++w->next_id,
		       .types = types,
		       .needs_started = true,
		       .done_needs = SB_WP_DONE_TIMED_OUT | SB_WP_DONE_CANCELLED | SB_WP_DONE_FLOODED},
	};
	struct sb_sup s;
	sb_sup_init(&s, &x.f, sink, (uint64_t)job->limits.timeout_s * 1000, hooks, NULL);
	if (encode_run(&x, job, sink)) {
		sb_sup_broken(&s, "out of memory");
	} else {
		sb_trace_stamp("job");
		flush_tx(&x);
		sb_trace_stamp("frame");
		sb_sup_run(&s);
	}
	enum sb_wrun rc = SB_WRUN_OK;
	if (x.retry) {
		rc = SB_WRUN_RETRY;
	} else if (x.wj.done && !s.killed) {
		res->exit_code = x.exit_code;
		res->signal = x.signal;
		res->timed_out = x.w_timed_out;
		res->output_limit_exceeded = x.w_flooded;
	} else {
		rc = SB_WRUN_BROKEN;
		res->exit_code = -1;
		sb_sup_broken(&s, "%s stopped answering", who(w)); /* unless it said why */
	}
	if (rc != SB_WRUN_RETRY) {
		sb_sup_verdict(&s, res);
		/* Fresh: what the backend verified, as is (the job has the
		 * sandbox's own limits). */
		res->sandbox = w->fresh ? json_deep_copy(w->sb.enforced) : sandbox_json(w);
		sb_netproxy_refusals(&w->net, net_mark, res);
	}
	sb_buf_free(&x.tx);
	return rc;
}
