/* The job supervisor: one poll loop that holds every job to the host's own
 * policy, whatever runs it. It owns the deadline, the grace periods, the
 * output caps and the flood kill, cancellation, progress reports and the
 * status another thread may read. It knows nothing of sandboxes, workers or
 * frames: a FEEDER brings the job's events to it, a SINK takes its output.
 *
 *                 ┌──────────── feeder ────────────┐
 *   cancel_fd ──▶ │ fds() / ready()  →  sb_sup_output(stream, bytes)
 *   deadline      │                  →  sb_sup_exited() / sb_sup_finish()
 *   progress  ◀── │                  →  sb_sup_broken("why")
 *   status    ◀── │ soft_stop()  ←  timeout, cancel, flood (when supported)
 *                 │ hard_kill()  ←  no soft stop, soft stop ignored, broken
 *                 └────────────────────────────────┘
 *                      sb_sup_output → sink->write (capture or job log)
 *
 * Feeders today: fresh.c (a fresh sandbox's raw pipes: stdin feed,
 * stdout/stderr, a pidfd for the command's exit; no soft stop) and
 * worker_job.c (a warm worker's frames; soft stop = a `cancel` frame; the
 * worker enforces the timeout itself, so the host's deadline is a later,
 * hard backstop). A session call (code in a long-lived interpreter) is a
 * third feeder whose soft stop sends an interrupt (KeyboardInterrupt): if it
 * takes effect within the soft-stop grace the session keeps its state,
 * otherwise the supervisor kills hard and `killed` tells the feeder that the
 * session's state is lost. A background job is any feeder run on its own
 * thread with a job-log sink (append-only, pageable, capped) instead of the
 * head+tail capture, no progress hook, a cancel_fd that job_cancel writes,
 * and sb_sup_status() read by job_status from other threads.
 *
 * Threads: sb_sup_run and every feeder and sink call run on one thread (the
 * job's). Only sb_sup_status may be called from other threads: the caller
 * learns of a job's supervisor through hooks->watch (called with it when the
 * run starts and with NULL when it ends); to stop a job from another thread,
 * make hooks->cancel_fd readable. */
#ifndef SAGEBOX_SUPERVISE_H
#define SAGEBOX_SUPERVISE_H

#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "runner/hooks.h"

/* ---- the policy: every time and cap the host holds a job to, defined once
 * (supervise.c). The warm worker is sent the values it applies inside the
 * sandbox (flood limit, exit grace) in its run frame. */
struct sb_sup_policy {
	/* After the job's process exited, how long its output may stay open (a
	 * leftover background process holding the pipes) before the sandbox
	 * is killed. */
	unsigned exit_grace_ms;
	/* After a hard kill, how long to wait for the pipes to close; past it
	 * the job ends anyway (pipes held by something we cannot kill). */
	unsigned kill_grace_ms;
	/* After a soft stop, how long the far side may take to confirm before
	 * the hard kill. */
	unsigned soft_stop_grace_ms;
	/* A feeder whose far side enforces the timeout itself (self_timed)
	 * gets this long after it to report, then the host kills hard. */
	unsigned self_timed_grace_ms;
	/* Progress reports while a job runs, unless the hooks say otherwise. */
	unsigned progress_interval_ms;
	/* Bytes of stdout's tail a progress report carries. */
	unsigned progress_tail_bytes;
	/* A stream writing this many times its cap is a flood: the job is
	 * stopped rather than drained forever. */
	unsigned flood_factor;
	/* The sandbox's own backstop (sb_sandbox_req.lifetime_s): its backend
	 * kills it this long after the longest it may rightly live, should
	 * sagebox itself be gone. */
	unsigned lifetime_margin_s;
};
extern const struct sb_sup_policy sb_sup_policy;

struct sb_sup;

/* ---- sinks: where a job's output goes */
/* The code's two text streams, and the display stream
 * (runner/display_stream.h: records of what the code displayed, figures
 * among them, never mixed into the text). */
enum sb_stream_id { SB_STREAM_STDOUT, SB_STREAM_STDERR, SB_STREAM_DISPLAY, SB_STREAMS };
/* The stream a worker's or a session's out frame names ("stdout",
 * "stderr", "display", as the driver names them); -1 for any other. */
int sb_stream_by_name(const char *name);

struct sb_sink;
struct sb_sink_ops {
	/* Keep (or drop) n bytes the code wrote to a stream (a sink that does
	 * not keep displayed items drops SB_STREAM_DISPLAY). -1: out of memory; the
	 * job is then stopped as a sandbox error. */
	int (*write)(struct sb_sink *k, enum sb_stream_id st, const char *p, size_t n);
	/* The last up to n bytes of stdout kept so far, valid UTF-8, malloc'd
	 * (NULL when out of memory), for progress reports. */
	char *(*tail)(struct sb_sink *k, size_t n, size_t *len);
};

struct sb_sink {
	const struct sb_sink_ops *ops;
	/* Per text stream: a stream writing more than this is a flood and the
	 * job is stopped (result: output_limit_exceeded). The capture sink sets
	 * its cap times flood_factor; a job log its own limit. The display
	 * stream's limit is the policy's (sb_sink_flood_bytes). */
	uint64_t flood_bytes;
};

/* The flood limit of stream st for sink k: flood_bytes for the text
 * streams; for the display stream, flood_factor times what a result may
 * carry of every class (the driver never sends more than that; a job
 * writing to the display pipe itself may). */
uint64_t sb_sink_flood_bytes(const struct sb_sink *k, enum sb_stream_id st);

/* ---- feeders: where a job's events come from */
#define SB_FEED_MAX_FDS 4

struct sb_feeder;
struct sb_feeder_ops {
	/* The fds to wait on now (at most SB_FEED_MAX_FDS) with their events;
	 * returns how many. Called before every wait. */
	int (*fds)(struct sb_feeder *f, struct sb_sup *s, struct pollfd *p);
	/* What the wait said about them (p as fds filled it, n of them).
	 * Reports through sb_sup_output / _exited / _finish / _broken. */
	void (*ready)(struct sb_feeder *f, struct sb_sup *s, const struct pollfd *p, int n);
	/* Ask the code to stop while keeping what it has (a cancel frame, a
	 * KeyboardInterrupt). NULL: not supported; every stop is a hard kill. */
	void (*soft_stop)(struct sb_feeder *f, struct sb_sup *s);
	/* Kill every process of the job's sandbox. Idempotent. */
	void (*hard_kill)(struct sb_feeder *f);
	/* Nothing more can arrive (its pipes are closed): after a hard kill,
	 * the job ends when this is true or after kill_grace_ms. */
	bool (*drained)(const struct sb_feeder *f);
};

struct sb_feeder {
	const struct sb_feeder_ops *ops;
	/* The far side enforces the timeout itself (the warm worker): the
	 * host's deadline is timeout + self_timed_grace_ms and is a hard kill.
	 * Otherwise the host's deadline is the timeout, and it stops softly
	 * when the feeder can. */
	bool self_timed;
};

/* ---- what another thread may read while the job runs */
struct sb_sup_status {
	bool running;              /* false once sb_sup_run has returned */
	uint64_t elapsed_ms;       /* so far, or in all once ended */
	uint64_t stdout_bytes, stderr_bytes;
	bool timed_out, cancelled, flooded;
	bool stopping;             /* a soft stop was asked */
	bool killed;               /* the sandbox was killed hard */
};

/* ---- the supervisor: one per job, on the caller's storage */
struct sb_sup {
	/* set by sb_sup_init */
	struct sb_feeder *feeder;
	struct sb_sink *sink;
	const struct sb_run_hooks *hooks;   /* progress and cancel_fd; may be NULL */
	const struct sb_sup_policy *policy;
	uint64_t start, deadline, next_progress;
	/* state and verdict, owned by the job's thread */
	uint64_t exited_at, soft_at, killed_at; /* 0: not yet */
	bool finished;
	bool timed_out, flooded, cancelled;
	bool killed;      /* hard: for a session, its state is lost */
	char broken[700]; /* non-empty: the feeder or the loop failed */
	bool out_of_memory; /* broken because the sandbox ran out of memory (set by the feeder) */
	/* published for sb_sup_status */
	_Atomic uint64_t total[SB_STREAMS];
	_Atomic unsigned flags;
	_Atomic uint64_t ended_ms;
};

/* Prepare a job: its clock starts now. hooks may be NULL; policy NULL is
 * sb_sup_policy (tests pass shorter graces). */
void sb_sup_init(struct sb_sup *s, struct sb_feeder *f, struct sb_sink *k, uint64_t timeout_ms,
		 const struct sb_run_hooks *hooks, const struct sb_sup_policy *policy);
/* Supervise until the job is over: finished, or killed and drained (or
 * the kill grace passed). Returns nothing: the verdict is in *s. */
void sb_sup_run(struct sb_sup *s);

/* Called by the feeder (job's thread): output the code wrote; the job's
 * process has exited (starts the exit grace); everything has arrived (the
 * job is over); the channel or the far side failed (first reason kept, the
 * sandbox is killed hard, the result is a sandbox error unless the job was
 * already stopped for a verdict); kill hard without a verdict. */
void sb_sup_output(struct sb_sup *s, enum sb_stream_id st, const char *p, size_t n);
void sb_sup_exited(struct sb_sup *s);
void sb_sup_finish(struct sb_sup *s);
void sb_sup_broken(struct sb_sup *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_sup_kill(struct sb_sup *s);

/* Any thread, between sb_sup_init and the end of the struct's life (for
 * hooks->watch: between its two calls). */
void sb_sup_status(const struct sb_sup *s, struct sb_sup_status *st);

/* After sb_sup_run, once the feeder has filled res->exit_code and
 * res->signal: add the host's verdict (timed_out, output_limit_exceeded,
 * cancelled), make a failure that is not a verdict a sandbox error, and
 * drop the SIGKILL the host sent itself. */
void sb_sup_verdict(const struct sb_sup *s, struct sb_result *res);

#endif
