/* What struct sb_sessions (runner/sessions/sessions.h's handle) holds,
 * for the files that implement its API: sessions.c (the session tools, and
 * the handle's making and ending), sess_files.c (files) and, from the room
 * above, runner/jobs/jobs.c (background jobs, the handle's tenant).
 * Layers, each using only those below it:
 *
 *   jobs/jobs.c             background jobs (through the tenant hooks
 *                           when the handle ends, expires or loses a client)
 *   sessions.c              session tools; makes and ends the handle
 *   sessions_ws.c           the workspace side of the session tools
 *   sess_files.c            a session's files
 *   reaper.c                expiry of idle sessions (and, through a hook,
 *                           of finished jobs)
 *   registry.c              ids, owners, tombstones, references, quotas
 *   spares.c                ready spare sandboxes
 *   sess.c  sess_feed.c     one session's sandbox; a call in it */
#ifndef SAGEBOX_SESSREG_H
#define SAGEBOX_SESSREG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "runner/sessions/reaper.h"
#include "runner/sessions/registry.h"
#include "runner/sessions/spares.h"
#include "workspaces/store.h"

struct sb_sessions;
struct sb_config;
struct sb_backend;

/* What lives on the sessions and ends with them (the background jobs,
 * runner/jobs/jobs.h), given by whoever makes the handle. */
struct sb_sessions_tenant {
	/* The reaper's hook, under the registry's lock: forget what finished
	 * long enough ago (ctx is the handle). */
	void (*prune_locked)(void *ctx, uint64_t now);
	/* A client is gone: stop what it runs. */
	void (*end_owner)(struct sb_sessions *ss, const char *owner);
	/* Sagebox stops, every session was killed: stop everything and wait. */
	void (*stop_all)(struct sb_sessions *ss);
};

struct sb_sessions {
	const struct sb_config *cfg;
	const struct sb_backend *be;
	const struct sb_sessions_tenant *tenant; /* may be NULL */
	struct sb_registry reg;
	struct sb_spares *spares;
	struct sb_reaper reaper;
	/* The named workspaces' store, opened (and made) at first use. */
	pthread_mutex_t store_lock;
	struct sb_ws_store store;
	bool store_open;
};

#endif
