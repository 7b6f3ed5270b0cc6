/* What struct sb_sessions (runner/sessions.h's handle) holds, for the files
 * that implement its API: sessions.c (the session tools, and the handle's
 * making and ending), jobs.c (background jobs) and sess_files.c (files).
 * Internal to src/runner/. Layers, each using only those below it:
 *
 *   sessions.c              session tools; makes and ends everything
 *   jobs.c  sess_files.c    background jobs; a session's files
 *   reaper.c                expiry of idle sessions (and, through a hook,
 *                           of jobs.c's finished jobs)
 *   registry.c              ids, owners, tombstones, references, quotas
 *   spares.c                ready spare sandboxes, the start back-off
 *   sess.c  sess_feed.c     one session's sandbox; a call in it */
#ifndef SAGEBOX_SESSREG_H
#define SAGEBOX_SESSREG_H

#include <stdint.h>

#include "runner/sessions/reaper.h"
#include "runner/sessions/registry.h"
#include "runner/sessions/spares.h"

struct sb_sessions {
	const struct sb_config *cfg;
	const struct sb_backend *be;
	struct sb_registry reg;
	struct sb_spares *spares;
	struct sb_reaper reaper;
};

/* jobs.c, for sessions.c: under the registry's lock, forget finished jobs
 * past their time (the reaper's prune hook; ctx is the sb_sessions); and,
 * at the end, stop every job and wait for its thread. */
void jobs_prune_locked(void *ctx, uint64_t now);
void jobs_stop_all(struct sb_sessions *ss);
/* Ask every running job of owner to stop (as job_cancel does). */
void jobs_cancel_owner(struct sb_sessions *ss, const char *owner);

#endif
