/* Sessions and background jobs, the runner's public API for the
 * tools layer.
 *
 * A session is a sandbox of its own (every backend: its own namespaces,
 * workspace tmpfs at /work and limits) running one interpreter that keeps
 * its state between calls (a Sage or Python globals dict, a bash). It is
 * known by a random id ("s_" + 32 hex digits from getrandom: 128 bits) and
 * belongs to the client (owner id) that opened it: another client's id is
 * "unknown" to everyone else, exactly like an id that never existed. Each
 * call supervised like a stateless one (runner/supervise.c), with a soft
 * stop first: a timeout or cancel interrupts the code (KeyboardInterrupt);
 * when it does not stop within the grace, the interpreter is restarted and
 * the caller is told its state was lost.
 *
 * A background job ("j_" + 32 hex) runs in a session's sandbox (a fork of
 * its interpreter, beside its calls) or, without one, in a sandbox of its
 * own; its output goes to a pageable log. Jobs end with their session or
 * with sagebox.
 *
 * Limits per client: max_sessions open sessions, max_jobs running jobs;
 * and of all clients together (one HTTP server, many tokens):
 * max_sessions_total, max_jobs_total. Each is checked and the session or
 * job listed under one hold of the registry's lock, so concurrent opens
 * cannot overshoot. A session unused for session_idle_minutes (no call, no running job) is
 * closed. One ready spare sandbox per language in use makes session_open
 * (and job_start) fast. Thread-safe: every function may be called from any
 * thread. */
#ifndef SAGEBOX_SESSIONS_H
#define SAGEBOX_SESSIONS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "core/job.h"
#include "core/result.h"
#include "runner/hooks.h"
#include "runner/sessions/open_opts.h"
#include "runner/sessions/sessions_ws.h"
#include "util/error.h"

struct sb_sessions;
struct sb_backend;

/* What lives on the sessions and ends with them (the background jobs:
 * runner/jobs/jobs.h's sb_jobs_tenant), given by whoever makes the handle;
 * NULL: nothing. Its shape is in runner/sessions/sessreg.h. */
struct sb_sessions_tenant;
struct sb_sessions *sb_sessions_new(const struct sb_config *cfg, const struct sb_backend *be,
				    const struct sb_sessions_tenant *tenant);
/* Ends every session and job (their processes die), then frees. */
void sb_sessions_free(struct sb_sessions *ss);

/* A client is gone (a service connection closed): cancel its running
 * background jobs and close its sessions (their sandboxes die). Finished
 * jobs are forgotten as usual. */
void sb_sessions_end_owner(struct sb_sessions *ss, const char *owner);
/* Open sessions plus running jobs of every client (0: nothing in use). */
unsigned sb_sessions_in_use(struct sb_sessions *ss);

/* ---- sessions */
struct sb_session_opened {
	char id[SB_SESSION_ID_LEN];
	enum sb_lang lang;
	unsigned idle_expiry_s;
	bool from_spare;       /* a ready spare was taken (no waiting for a start) */
	/* A named workspace: {name, created, cap_bytes, bytes, files: {files,
	 * dirs, bytes, errors, skipped, skipped_more}, state: (with restore)
	 * {restored, failed, not_saved, error, ...}} (owned; NULL: none). */
	json_t *workspace;
};
int sb_session_open(struct sb_sessions *ss, const char *owner, const struct sb_session_open_opts *o,
		    struct sb_session_opened *out, struct sb_error *err);
/* {"sessions": [{session_id, lang, age_s, idle_s, busy, memory_bytes,
 * private_memory_bytes, running_jobs: [...]}], "max_sessions",
 * "max_sessions_total", ...}. */
json_t *sb_session_list(struct sb_sessions *ss, const char *owner);
/* What owner uses, for the status tool (never another owner's):
 * {sessions, max_sessions, max_sessions_total, running_jobs, max_jobs,
 * max_jobs_total} (the totals are limits; other clients' counts are not
 * shown). */
json_t *sb_session_usage(struct sb_sessions *ss, const char *owner);
/* Fresh globals (a new interpreter), files kept. */
int sb_session_reset(struct sb_sessions *ss, const char *owner, const char *id, struct sb_error *err);
/* Every process of it dies, its workspace is discarded, its jobs end. */
int sb_session_close(struct sb_sessions *ss, const char *owner, const char *id, struct sb_error *err);

/* Run job in the session's interpreter (job->lang must suit the session: a
 * Sage session takes Sage and Python). -1 with err when the session cannot
 * take it (unknown, expired, wrong language); 0 with a result otherwise. */
int sb_session_run(struct sb_sessions *ss, const char *owner, const char *id, const struct sb_job *job,
		   const struct sb_run_hooks *hooks, struct sb_result *res, struct sb_session_verdict *v,
		   struct sb_error *err);

/* ---- files (resolved inside the session's sandbox, beneath /work) */
/* reply: {path, bytes}; a full workspace is err (err->errnum ENOSPC). */
int sb_session_write(struct sb_sessions *ss, const char *owner, const char *id, const char *path, const void *data,
		     size_t n, bool append, json_t **reply, struct sb_error *err);
/* Bytes [offset, offset + length) of a regular file to fn in chunks;
 * meta: {path, size, mtime}. Length 0 reads nothing: only the meta. */
int sb_session_read(struct sb_sessions *ss, const char *owner, const char *id, const char *path, uint64_t offset,
		    uint64_t length, int (*fn)(void *ctx, const char *p, size_t n), void *ctx, json_t **meta,
		    struct sb_error *err);
/* reply: {path, entries: [{name, type, size, mtime}], cut}. */
int sb_session_files(struct sb_sessions *ss, const char *owner, const char *id, const char *path, json_t **reply,
		     struct sb_error *err);

/* ---- metrics (metrics/metrics.h), by language and client (by_client:
 * the owner's name, else "all"): open sessions, and the spares ready. */
void sb_sessions_metrics(struct sb_sessions *ss, bool by_client);

#endif
