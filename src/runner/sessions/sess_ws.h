/* A session on a named workspace, host side (internal to runner/sessions):
 * the store's files copied into the session's /work when it opens, what
 * changed copied back after every call, after a background job and when it
 * closes (each time one staged, journaled sync: workspaces/sync.h), and the
 * session's variables saved and restored (a call of the interpreter's own,
 * driver/state.py). Below the registry, which finishes a workspace session
 * (save, then sync) before it is killed on purpose and lets it go once its
 * sandbox is gone; beside sess_feed.c, whose calls it uses.
 *
 * What a SIGKILL of sagebox loses (docs/WORKSPACES.md): the files the
 * running call (or a background job) wrote since the last sync that
 * committed, and the variables since the last save (session_save, or the
 * automatic one at close, expiry and a clean shutdown). A sync is whole or
 * not at all. */
#ifndef SAGEBOX_SESS_WS_H
#define SAGEBOX_SESS_WS_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "config/config.h"
#include "runner/sessions/sess.h"
#include "workspaces/store.h"

struct sess_ws {
	struct sb_ws ws;             /* held while the session lives */
	pthread_mutex_t lock;        /* one restore or sync at a time */
	/* The store's files are all in /work: only then may /work go back to
	 * the store (a sync of a half-restored /work would lose files). */
	bool restored;
	bool saved;                  /* the variables were saved since the last call */
	bool project;                /* the user's project folder is bound at /work/project */
	/* The syncer (sess_ws_sync.c): a thread of the session's own that
	 * takes the sync requests in the order they went out. Under q: */
	pthread_mutex_t q;
	pthread_cond_t cv;           /* a request queued or answered; stop */
	pthread_t syncer;
	bool syncer_started, running, stop;
	struct ws_req *queue;        /* asked, not yet taken */
	uint64_t asked, answered;    /* syncs asked, and answered (in that order) */
	char problem[600];           /* why a call's sync kept nothing ("": it kept it) */
	char skipped[600];           /* what a call's sync found and did not keep */
};

/* sess_ws_sync.c: start the session's syncer (at attach). */
int sess_ws_syncer_start(struct sess *s, struct sb_error *err);

/* s works on ws (held; its handle is taken over, *ws is left closed). -1
 * with err: out of memory (ws is then closed). */
int sess_ws_attach(struct sess *s, struct sb_ws *ws, bool project, struct sb_error *err);
/* Stop the syncer (before the session is destroyed: it uses the session). */
void sess_ws_stop(struct sess *s);
/* Let the workspace go (its meta written, its lock released) and free it:
 * after the session's sandbox is gone. NULL: nothing. */
void sess_ws_free(struct sess_ws *w);
/* Wait until the syncer has nothing asked of it. */
void sess_ws_flush(struct sess *s);
/* Why the syncer's last sync kept nothing, into out ("" when it kept it,
 * or was not asked), and what it found and did not keep (a link, a FIFO,
 * ...) into skipped ("": nothing); the notes are taken (said once). */
void sess_ws_take_problem(struct sess *s, char *out, size_t n, char *skipped, size_t sn);

/* The store's files into the session's /work. report (new): {files, dirs,
 * bytes, errors: [{path, why}], skipped: [...], skipped_more}. -1 with err
 * when the session ended (or the store could not be read). */
int sess_ws_restore_files(struct sess *s, json_t **report, struct sb_error *err);

/* /work into the store now (asked behind the syncs asked before; the
 * caller holds a reference to s and waits): report (new) {files, dirs,
 * deleted, bytes, skipped, skipped_more}. -1 with err when nothing of it was kept (the
 * workspace's cap on disk, the disk, the session): the store is as before,
 * and the next sync sends the same changes again (the controller keeps a
 * sync as its base only once the host says it kept it: `synced`). */
int sess_ws_sync(struct sess *s, bool always, json_t **report, struct sb_error *err);

/* A call's done frame said whether /work changed: if so a sync is asked
 * (before the call's result goes back) and the syncer takes it. First it
 * waits for the syncs asked before (the controller answered them before
 * it ran this call, so only their commit is left): what they kept or not
 * is then said with this call's result, whatever the timing. */
void sess_ws_note_done(struct sess *s, bool changed);

/* save or restore the session's variables (a call of the interpreter's
 * own, under the supervisor: timeout_s, interrupt, restart). state (new):
 * the interpreter's report, or {error}. The caller holds the interpreter
 * (sess_take). 0, or -1 with err when the session could not run it. */
int sess_ws_state(struct sess *s, const char *op, unsigned timeout_s, json_t **state, struct sb_error *err);

/* Before a workspace session is ended on purpose (closed, expired,
 * sagebox stopping): its variables saved when the interpreter is free
 * (within save_s seconds), then its files synced. Best effort, says
 * nothing: the next open reports what is there. */
void sess_ws_finish(struct sess *s, unsigned save_s);

#endif
