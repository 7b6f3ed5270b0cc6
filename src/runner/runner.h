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
#include "core/handle.h"
#include "core/job.h"
#include "core/result.h"
#include "runner/hooks.h"
#include "util/error.h"

struct sb_runner;

/* What sb_runner_run gives back, by the job's kind. */
struct sb_run_out {
	struct sb_result res;              /* STATELESS, SESSION: the result */
	struct sb_session_verdict session; /* SESSION: what the call did to its session */
	char job_id[SB_SESSION_ID_LEN];    /* BACKGROUND: the job, started in the background */
	struct sb_error err;               /* -1: why the job was not taken */
	bool unusable;                     /* -1 because there is no usable backend (or
					      no memory for the sessions) */
};
void sb_run_out_free(struct sb_run_out *o);

/* A runner for this configuration. Does not start anything yet. */
struct sb_runner *sb_runner_new(const struct sb_config *cfg, struct sb_error *err);
/* Kill every job and worker, then free. */
void sb_runner_free(struct sb_runner *r);

/* Start warm workers in the background (warm isolation only; no-op else). */
void sb_runner_prestart(struct sb_runner *r, enum sb_lang lang);

/* The runner's one entry: run a job as its kind says. It picks the feeder
 * (a warm worker, a fresh sandbox, the session's interpreter) and the sink
 * (a call's head+tail capture, a background job's log). A stateless job
 * always gives a result (0; res->internal_error says when the sandbox
 * failed or there is no backend). A session call gives 0 with a result and
 * the verdict, or -1 with err when the session cannot take it (unknown,
 * expired, wrong language, no backend). A background job gives 0 with its
 * id (it runs on in the background) or -1 with err. hooks may be NULL
 * (a background job has its own). out is filled in every case; free it
 * with sb_run_out_free. */
int sb_runner_run(struct sb_runner *r, const struct sb_job *job, const struct sb_run_hooks *hooks,
		  struct sb_run_out *out);

/* The sessions and background jobs (runner/sessions/sessions.h), started at first
 * use; NULL with err when there is no usable backend. */
struct sb_sessions;
struct sb_sessions *sb_runner_sessions(struct sb_runner *r, struct sb_error *err);

/* A client is gone: end its sessions and background jobs
 * (sb_sessions_end_owner); nothing when sessions never started. */
void sb_runner_end_owner(struct sb_runner *r, const char *owner);
/* Open sessions plus running background jobs (0 when none ever started). */
unsigned sb_runner_in_use(struct sb_runner *r);

/* Status of the backend and the runner, never running user code. */
json_t *sb_runner_status(struct sb_runner *r);

const struct sb_config *sb_runner_config(const struct sb_runner *r);

#endif
