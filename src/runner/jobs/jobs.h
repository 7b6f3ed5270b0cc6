/* Background jobs, the runner's public API for the tools layer: code that
 * runs while the model does other work, in a session's sandbox or one of
 * its own, on the sessions' handle (runner/sessions/sessions.h), owned by
 * a client like its sessions. Thread-safe. */
#ifndef SAGEBOX_RUNNER_JOBS_H
#define SAGEBOX_RUNNER_JOBS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/job.h"
#include "runner/sessions/sessions.h"
#include "util/error.h"

/* What the sessions' handle calls as the jobs end with it (the reaper's
 * pruning, a client gone, sagebox stopping): the handle's maker passes it
 * to sb_sessions_new. */
extern const struct sb_sessions_tenant sb_jobs_tenant;

/* Start code as a job, in session_id's sandbox or (NULL) in one of its
 * own; timeout_s <= job_timeout. The id is known at once; the job starts
 * in the background. */
int sb_job_start(struct sb_sessions *ss, const char *owner, enum sb_lang lang, const char *code, size_t code_len,
		 const char *session_id, unsigned timeout_s, char id_out[SB_SESSION_ID_LEN], struct sb_error *err);
/* {job_id, state, lang, session_id, runtime_ms, exit_code, signal,
 * output_bytes, output_dropped_bytes, last_output, error, output_note}.
 * state: queued, running, done, failed, timed_out, cancelled.
 * output_note (when output was dropped) says why. */
json_t *sb_job_status(struct sb_sessions *ss, const char *owner, const char *id, struct sb_error *err);
/* {job_id, state, offset, next_offset, end_offset, dropped_bytes, output}:
 * up to max bytes of the job's output from offset. */
json_t *sb_job_output(struct sb_sessions *ss, const char *owner, const char *id, uint64_t offset, size_t max,
		      struct sb_error *err);
int sb_job_cancel(struct sb_sessions *ss, const char *owner, const char *id, struct sb_error *err);

/* Metrics (metrics/metrics.h): background jobs queued or running, by
 * language and client (by_client: the owner's name, else "all"). */
void sb_jobs_metrics(struct sb_sessions *ss, bool by_client);

#endif
