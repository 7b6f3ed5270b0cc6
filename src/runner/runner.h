/* The runner: turns a job into a result. It picks the backend, starts the
 * sandbox (fresh) or hands the job to a warm worker (warm), feeds the code,
 * enforces its own outer deadline and output caps, and kills the whole
 * sandbox on timeout, overflow or cancellation. Thread-safe: several jobs may
 * run at once, each from its own thread. */
#ifndef SAGEBOX_RUNNER_H
#define SAGEBOX_RUNNER_H

#include <jansson.h>
#include <stdint.h>

#include "config/config.h"
#include "core/job.h"
#include "core/result.h"
#include "util/error.h"

struct sb_runner;
struct sb_sink;
struct sb_sup;

struct sb_progress {
	uint64_t elapsed_ms;
	uint64_t stdout_bytes, stderr_bytes;  /* written so far */
	const char *stdout_tail;              /* last bytes of stdout so far (valid UTF-8) */
	size_t stdout_tail_len;
};

struct sb_run_hooks {
	/* Called from the job's thread about every progress_interval_ms while
	 * the job runs (not at all when NULL). */
	void (*progress)(void *ctx, const struct sb_progress *p);
	void *ctx;
	unsigned progress_interval_ms; /* 0: the supervisor's default (supervise.c) */
	/* When this fd becomes readable the job is cancelled: its sandbox is
	 * killed and the result has cancelled=true. -1: not cancellable. */
	int cancel_fd;
	/* Called from the job's thread with the job's supervisor when it
	 * starts, and with NULL when it ends (again per attempt when a warm job
	 * is retried). In between, another thread may call sb_sup_status(s)
	 * (runner/supervise.h) on it, under a lock it shares with this hook.
	 * NULL: not called. */
	void (*watch)(void *ctx, const struct sb_sup *s);
	/* A session run (sb_session_run) calls it once it has the session's
	 * turn, before anything runs: the caller takes its job slot there, so
	 * that a call waiting behind its session's busy turn holds none. false:
	 * the call was cancelled meanwhile (nothing runs). NULL: not called. */
	bool (*admit)(void *ctx);
};

/* A runner for this configuration. Does not start anything yet. */
struct sb_runner *sb_runner_new(const struct sb_config *cfg, struct sb_error *err);
/* Kill every job and worker, then free. */
void sb_runner_free(struct sb_runner *r);

/* Start warm workers in the background (warm isolation only; no-op else). */
void sb_runner_prestart(struct sb_runner *r, enum sb_lang lang);

/* Run one job to completion. Returns 0 when a result was produced (even if
 * the code failed or the sandbox could not be set up: then
 * res->internal_error says why). hooks may be NULL. */
int sb_runner_run(struct sb_runner *r, const struct sb_job *job, const struct sb_run_hooks *hooks,
		  struct sb_result *res);
/* The same with the output going to sink (runner/supervise.h: e.g. a
 * background job's log) instead of res->out and res->err, which stay
 * empty. sb_runner_run is this with the head+tail capture sink. */
int sb_runner_run_sink(struct sb_runner *r, const struct sb_job *job, const struct sb_run_hooks *hooks,
		       struct sb_sink *sink, struct sb_result *res);

/* The sessions and background jobs (runner/sessions.h), started at first
 * use; NULL with err when there is no usable backend. */
struct sb_sessions;
struct sb_sessions *sb_runner_sessions(struct sb_runner *r, struct sb_error *err);

/* Status of the backend and the runner, never running user code. */
json_t *sb_runner_status(struct sb_runner *r);

const struct sb_config *sb_runner_config(const struct sb_runner *r);

#endif
