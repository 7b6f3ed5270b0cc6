/* A session on a named workspace, host side (internal to runner/sessions):
 * the store's files copied into the session's /work when it opens, what
 * changed copied back after every call, after a background job and when it
 * closes (each time one staged, journaled sync: workspaces/sync.h), and the
 * session's variables saved and restored (a call of the interpreter's own,
 * driver/state.py). Below the registry, which finishes a workspace session
 * (save, then sync) before it is killed on purpose and lets it go once its
 * sandbox is gone; above sess_feed.c, whose calls it uses (and which
 * knows nothing of it: the caller of a call hands its outcome here).
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
#include "runner/sessions/sess_ws_sync.h"
#include "workspaces/store.h"

/* s works on ws (held; its handle is taken over, *ws is left closed). -1
 * with err: out of memory (ws is then closed). */
int sess_ws_attach(struct sess *s, struct sb_ws *ws, bool project, struct sb_error *err);
/* Let the workspace go (its meta written, its lock released) and free it:
 * after the session's sandbox is gone. NULL: nothing. */
void sess_ws_free(struct sess_ws *w);

/* The store's files into the session's /work. report (new): {files, dirs,
 * bytes, errors: [{path, why}], skipped: [...], skipped_more}. -1 with err
 * when the session ended (or the store could not be read). */
int sess_ws_restore_files(struct sess *s, json_t **report, struct sb_error *err);

/* A named workspace's name and cap added to a call's sandbox report
 * (sess_sandbox_json's "session"); nothing for a session without one. */
void sess_ws_describe(struct sess *s, json_t *sandbox);

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
