/* The registry of sessions and background jobs: their random ids, the
 * clients that own them, the ended sessions remembered (tombstones) so that
 * their ids get a precise error, the references that keep a session alive
 * while a call or job uses it, and the limits per client and of all clients
 * together (quotas). Internal to src/runner/: sessions.c, jobs.c,
 * sess_files.c and reaper.c are above it; it is above sess.c (a session's
 * sandbox) and spares.c (the ready spare sandboxes).
 *
 * Locks, always in this order: the spares' lock (spares.c), the registry's
 * lock, a session's own lock (sess.h). */
#ifndef SAGEBOX_RUNNER_REGISTRY_H
#define SAGEBOX_RUNNER_REGISTRY_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>

#include "config/config.h"
#include "runner/sessions/sess.h"
#include "runner/hooks.h"
#include "runner/sessions/spares.h"
#include "util/error.h"

/* The longest a workspace session's automatic save may take when it is
 * closed, expires or sagebox stops (its timeout when shorter). */
#define WS_SAVE_AT_CLOSE_S 20

/* Ended sessions remembered, so that their ids get a precise error. */
#define SB_TOMBS 256

struct reg_tomb {
	char id[SB_SESSION_ID_LEN];
	char owner[SB_OWNER_MAX];
	char why[300];
};

/* A ring of the last SB_TOMBS ended sessions (the oldest is forgotten). */
struct reg_tombs {
	struct reg_tomb t[SB_TOMBS];
	unsigned next;
};
/* Remember that owner's session id ended, and why ("was closed with ..."). */
void reg_tomb_add(struct reg_tombs *t, const char *id, const char *owner, const char *why);
/* Why owner's session id ended, or NULL: never ended, forgotten, or
 * another owner's (whose ids are unknown to everyone else). */
const char *reg_tomb_find(const struct reg_tombs *t, const char *id, const char *owner);

/* The limits, one row each (registry.c's table). */
enum reg_quota { REG_SESSIONS, REG_JOBS };
/* -1 with err (what is full, the setting, what to do) when a client that
 * has mine of them, of all clients' together, may not have one more:
 * max_sessions and max_sessions_total, or max_jobs and max_jobs_total.
 * Pure: the counting is the caller's. */
int reg_quota_check(enum reg_quota q, unsigned mine, unsigned all, const struct sb_config *cfg, struct sb_error *err);

/* A background job as the registry counts it; the first member of
 * jobs.c's job (which holds the rest). */
struct reg_job {
	char id[SB_SESSION_ID_LEN];
	char owner[SB_OWNER_MAX];
	char session[SB_SESSION_ID_LEN];   /* "" : a sandbox of its own */
	/* under the registry's lock: */
	bool running;                      /* queued or running */
	struct sess *s;                    /* its sandbox (a reference) while its thread has one */
	struct reg_job *next;
};

struct sb_registry {
	const struct sb_config *cfg;
	/* The lists and their links, every listed session's refs, every job's
	 * running and s, the tombstones and stopping. */
	pthread_mutex_t lock;
	struct sess *sessions;             /* sessions in use (owned, anonymous) */
	struct reg_job *jobs;              /* running and finished jobs */
	struct reg_tombs tombs;
	bool stopping;                     /* sagebox is shutting down: nothing new */
};

void reg_init(struct sb_registry *r, const struct sb_config *cfg);
void reg_fini(struct sb_registry *r);

/* A new handle of this kind (SB_HANDLE_SESSION, SB_HANDLE_JOB) naming the
 * instance setting (core/handle.h: 128 random bits). */
int reg_new_id(const struct sb_registry *r, char out[SB_SESSION_ID_LEN], char kind);
/* Whether id has the shape reg_new_id gives for kind. */
bool reg_id_ok(const char *id, char kind);
/* When id is a handle of another instance: err says that its session or
 * job ended with that instance (a router sends it here only when its own
 * instance is gone), and true. */
bool reg_elsewhere(const struct sb_registry *r, const char *id, struct sb_error *err);

/* Under the lock: open sessions (not anonymous) or running jobs of owner,
 * or of every client (owner NULL). */
unsigned reg_count_locked(struct sb_registry *r, enum reg_quota q, const char *owner);
/* Under the lock: reg_quota_check with the registry's counts. */
int reg_room_locked(struct sb_registry *r, enum reg_quota q, const char *owner, struct sb_error *err);
/* Locks: reg_count_locked. */
unsigned reg_count(struct sb_registry *r, enum reg_quota q, const char *owner);
/* Under the lock: a job running in s. */
bool reg_job_in_locked(struct sb_registry *r, const struct sess *s);
/* The ids of the jobs running in session_id, appended to into. */
void reg_session_jobs(struct sb_registry *r, const char *session_id, json_t *into);

/* The open sessions by language and client (by_client: the owner's name,
 * else "all"), into the metrics. */
void reg_metrics(struct sb_registry *r, bool by_client);

/* The session id of owner's, with a reference; or -1 and err saying why
 * not (unknown, expired, closed: the same words for another client's). */
int reg_get(struct sb_registry *r, const char *owner, const char *id, struct sess **out, struct sb_error *err);
/* A ready session sandbox for lang (a spare: waits for one), with a
 * reference, listed: owned by owner (within its quota), or anonymous (a
 * job's sandbox of its own, counted as the job). */
struct sess *reg_new_session(struct sb_registry *r, struct sb_spares *sp, const char *owner, enum sb_lang lang,
			     bool anonymous, bool *from_spare, struct sb_error *err);
/* The same for a workspace whose cap is smaller than workspace_size: a
 * sandbox of its own (no spare) with a /work of bytes, listed as owner's. */
struct sess *reg_new_session_sized(struct sb_registry *r, const struct sb_backend *be, const char *owner,
				   enum sb_lang lang, uint64_t bytes, struct sb_error *err);
/* Drop a reference; the last one destroys it. */
void reg_put(struct sb_registry *r, struct sess *s);
/* End s on purpose: out of the list, remembered with why, its named
 * workspace (if any) saved and synced, killed, and the list's reference
 * dropped. */
void reg_close(struct sb_registry *r, struct sess *s, const char *why);

#endif
