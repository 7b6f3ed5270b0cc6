/* One session's sandbox, host side (internal to src/runner/; the public
 * API is runner/sessions/sessions.h). A session is a sandbox of the configured
 * backend whose command is the driver in session mode (the controller,
 * src/worker/driver/session.py), spoken to over the framed protocol on the
 * sandbox's stdin/stdout. It is a struct sb_worker underneath (spawn,
 * ready, its frame reader, its stderr kept for messages), with:
 *
 *   a pump thread      reads every frame the controller sends and routes it
 *                      by id to the inbox of whoever asked (a call, a job,
 *                      a file request), waking it through the inbox's
 *                      eventfd; frames for nobody are dropped; a protocol
 *                      violation or the controller's death ends the session
 *   a writer lock      requests from several threads (a call, job_status's
 *                      memory figure, a job's kill) share the channel
 *   a busy flag        the session's one interpreter runs one call at a
 *                      time: calls, job starts and resets take turns
 *
 * The controller is not trusted beyond its own session: the host holds its
 * own deadlines and caps (the supervisor), and kills the whole sandbox on
 * any misbehaviour. */
#ifndef SAGEBOX_SESS_H
#define SAGEBOX_SESS_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "core/job.h"
#include "core/result.h"
#include "runner/hooks.h"
#include "runner/warm/worker.h"
#include "sandbox/sandbox.h"
#include "util/buf.h"
#include "util/error.h"

/* One frame the pump routed. */
struct sess_frame {
	struct sess_frame *next;
	enum sb_wp_type type;
	json_t *hdr;
	size_t n;
	char payload[];
};

/* Where the frames of one request id go. */
struct sess_inbox {
	json_int_t id;
	int efd;                       /* readable: frames queued, or the session ended */
	struct sess_frame *head, *tail;
	size_t queued;                 /* bytes waiting */
	/* A reader that keeps up by itself (a workspace's sync writes each
	 * frame to disk as it takes it): past SESS_INBOX_HOLD bytes queued the
	 * pump waits for it rather than ending the session as a flood. */
	bool held;
	struct sess_inbox *next;
};
#define SESS_INBOX_HOLD (8u << 20)

struct sess {
	/* Set while a spare (by its maker) or as the registry lists it (under
	 * the registry's lock, before anyone else can reach it); read-only
	 * after. */
	char id[SB_SESSION_ID_LEN];    /* "" while a spare */
	char owner[SB_OWNER_MAX];
	enum sb_lang lang;
	bool anonymous;                /* a background job's own session: counted as its job, never shown */
	struct sb_worker *w;           /* the sandbox, its channel, its stderr */
	pthread_t pump;
	bool pump_started;
	uint64_t created_ms;
	pthread_mutex_t lock;          /* routes, next_id, dead, closed, why, busy */
	pthread_cond_t changed;        /* busy dropped, or the session ended (monotonic) */
	struct sess_inbox *routes;
	json_int_t next_id;
	bool dead;
	bool closed;                   /* ended on purpose (close, expiry, shutdown) */
	char why[400];                 /* how it ended */
	bool busy;                     /* the interpreter is taken */
	json_t *interacts;             /* under lock: the interacts its calls displayed
					  (sess_interacts.c); NULL: none yet */
	pthread_mutex_t tx;            /* one writer on the channel */
	_Atomic uint64_t used_ms;      /* the last call's start (no lock) */
	/* A named workspace's session: its store and syncs (sess_ws.h); set
	 * by session_open before the session's id is given out. NULL: none. */
	struct sess_ws *ws;
	/* Under the registry's lock (registry.h) once listed: */
	unsigned refs;
	struct sess *next;             /* the registry's list */
};

/* Whether sessions get the user's project folder: project_dir is set, the
 * clients are the local user's, and the backend can bind it. */
static inline bool sess_project_bound(const struct sb_config *cfg, const struct sb_backend *be)
{
	return cfg->project_dir[0] && !cfg->http_clients && sb_backend_has(be, SB_CAP_PROJECT);
}

/* Start a session sandbox for lang and wait until its controller is ready
 * (the interpreter imported). lifetime_s: the backend's backstop (0: none).
 * workspace_bytes: its /work's size (0: workspace_size). The user's
 * project folder is bound when project_dir is set and the backend can. */
struct sess *sess_spawn(const struct sb_config *cfg, const struct sb_backend *be, enum sb_lang lang,
			unsigned lifetime_s, uint64_t workspace_bytes, struct sb_error *err);
/* End it: every process dies (idempotent, any thread). closed: on purpose. */
void sess_kill(struct sess *s, bool closed, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Kill, wait for the sandbox, join the pump, free. */
void sess_destroy(struct sess *s);
/* Whether it ended; why says how (may be NULL). */
bool sess_dead(struct sess *s, char *why, size_t n);

/* Inboxes: register one (it gets a fresh id), take its frames one at a
 * time (NULL: none now), drop it. Its eventfd stays readable while frames
 * wait: a waiter polls it and takes frames, and never reads it itself. */
int sess_route(struct sess *s, struct sess_inbox *in);
struct sess_frame *sess_pop(struct sess *s, struct sess_inbox *in);
void sess_unroute(struct sess *s, struct sess_inbox *in);
void sess_frame_free(struct sess_frame *f);
/* The pump's hand-off of one frame to the inbox of its id (dropped when
 * nobody waits for that id). */
void sess_deliver(struct sess *s, const struct sb_wp_frame *f);
/* Wait until in has frames, the session ended, cancel_fd is readable, or
 * timeout_ms passed (-1: no limit). 1: cancelled; 0: otherwise. */
int sess_wait(struct sess_inbox *in, int cancel_fd, int timeout_ms);

/* Send a frame (hdr is stolen; its "id" is in's) and, after it, n raw
 * bytes (the protocol's code_bytes). -1 when the session is gone. */
int sess_send(struct sess *s, json_t *hdr, const void *raw, size_t n);

/* A request and its reply: data frames go to on_data (may be NULL), the
 * reply's header (new reference) to *reply. -1 with err when the session
 * ended or did not answer within timeout_ms (which ends it, unless the
 * request is SESS_MAY_WAIT: a figure that may come late). */
#define SESS_MAY_WAIT 1
int sess_request(struct sess *s, json_t *hdr, const void *raw, size_t n, int timeout_ms, unsigned flags,
		 int (*on_data)(void *ctx, const char *p, size_t n), void *ctx, json_t **reply, struct sb_error *err);

/* Take the interpreter (wait while another call has it). 0; 1 when
 * cancel_fd became readable first; -1 with err when the session ended. */
int sess_take(struct sess *s, int cancel_fd, struct sb_error *err);
void sess_give(struct sess *s);

/* Interacts (sess_interacts.c). Whether job, an interact's run, may run:
 * -1 with err (nothing runs) for a shell session, an interact it does not
 * have, or values its controls do not take. */
int sess_interact_refused(struct sess *s, const struct sb_job *job, struct sb_error *err);
/* After a call: the interacts its result displayed are the session's (an
 * interpreter that was restarted lost the earlier ones). */
void sess_interacts_keep(struct sess *s, const struct sb_result *res, bool restarted);
/* A reset: a new interpreter has none. */
void sess_interacts_forget(struct sess *s);

/* "session s_… ended: ...; open a new one with session_open". */
void sess_ended_error(struct sess *s, struct sb_error *err);

/* A Sage session runs Sage and Python (both in its interpreter); the
 * others their own language only. */
static inline bool sess_takes(enum sb_lang session, enum sb_lang call)
{
	return session == call || (session == SB_LANG_SAGE && call == SB_LANG_PYTHON);
}

#endif
