/* A workspace session's syncer (sess_ws_sync.c): what the session keeps
 * of its workspace (struct sess_ws) and the syncs of /work into the store,
 * in the order they were asked. Below the rest of the workspace side
 * (sess_ws.h), which starts it, asks it and waits for it. */
#ifndef SAGEBOX_SESS_WS_SYNC_H
#define SAGEBOX_SESS_WS_SYNC_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runner/sessions/sess.h"
#include "util/error.h"
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
	/* The notes of the syncs asked before a call's own, set aside when
	 * that call's sync is asked: its result says those, never its own
	 * sync's (which may finish before the result is made). */
	char say_problem[600], say_skipped[600];
};

/* Start the session's syncer (at attach). */
int sess_ws_syncer_start(struct sess *s, struct sb_error *err);

/* Stop the syncer (before the session is destroyed: it uses the session). */
void sess_ws_stop(struct sess *s);

/* Wait until the syncer has nothing asked of it. */
void sess_ws_flush(struct sess *s);

/* Why an earlier sync kept nothing, into out ("" when it kept it, or was
 * not asked), and what it found and did not keep (a link, a FIFO, ...)
 * into skipped ("": nothing); the notes are taken (said once). After a
 * call: the notes set aside when its sync was asked (the syncs before
 * it); all: every sync's so far (the caller flushed). */
void sess_ws_take_problem(struct sess *s, bool all, char *out, size_t n, char *skipped, size_t sn);

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

#endif
