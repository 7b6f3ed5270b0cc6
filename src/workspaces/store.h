/* Named workspaces kept on disk: the store. A session opened with
 * `workspace: NAME` works in a size-capped tmpfs at /work like any session;
 * its files are kept here, in the user's data directory, and copied back
 * into a new session's /work when it opens the same NAME again. This file
 * knows the layout, the names, who holds a workspace and how big it is; the
 * copying in is restore.h, the copying out after each call sync.h, both on
 * the never-follow primitives of fsafe.h. docs/WORKSPACES.md says why a
 * tmpfs synced to disk and not a bind mount or an image.
 *
 *   ROOT/                           $XDG_DATA_HOME/sagebox/workspaces,
 *                                   ~/.local/share/..., root: /var/lib/sagebox/workspaces
 *     CLIENT/                       "local" (the local user: stdio, the service)
 *                                   or "token-NAME" (an HTTP token's name)
 *       +lock                       flock'd while a client's caps are worked out
 *       NAME/                       every directory 0700
 *         files/                    the workspace as /work had it at the last sync
 *         lock                      locked (OFD lock) by the process whose session holds it;
 *                                   says which session, which process, its cap
 *         meta.json                 bytes, files, last used, the last language
 *         state.json                what the last session_save saved and did not
 *         stage/                    a sync in progress (sync.h): its new files and,
 *                                   once complete, its journal
 *
 * One client's workspaces are invisible to every other client: a name is
 * looked up only under the caller's own CLIENT directory, so another
 * client's NAME is simply its own, different workspace. */
#ifndef SAGEBOX_WORKSPACES_STORE_H
#define SAGEBOX_WORKSPACES_STORE_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "workspaces/ws.h"

#define SB_WS_CLIENT_LOCAL "local"
/* Entries (files and directories) one workspace may hold: the session's
 * tmpfs gets this many inodes, and a sync past it is refused. */
#define SB_WS_ENTRIES_MAX 65536
/* Where the saved interpreter state lives inside the workspace. */
#define SB_WS_STATE_DIR ".sagebox"
#define SB_WS_STATE_FILE ".sagebox/session.pickle"

/* [A-Za-z0-9._-]{1,64}, not "." or "..": false with err saying so. */
bool sb_ws_name_check(const char *name, struct sb_error *err);
/* A client directory name: "local", or "token-" + [A-Za-z0-9._@-]{1,63}. */
bool sb_ws_client_ok(const char *client);
/* The client name of an HTTP token's name (out: SB_WS_CLIENT_MAX). */
int sb_ws_client_of_token(const char *token, char *out, size_t n, struct sb_error *err);

/* The store's root path (not created). */
int sb_ws_root(char *dir, size_t n, struct sb_error *err);

struct sb_ws_store {
	char root[PATH_MAX];
	int root_fd;                     /* O_PATH | O_DIRECTORY, -1: closed */
};
/* Open the root (made 0700 with its parents when create). -1 with err
 * (no such store when !create: errnum ENOENT). */
int sb_ws_store_open(struct sb_ws_store *st, bool create, struct sb_error *err);
void sb_ws_store_close(struct sb_ws_store *st);

/* Open client's workspace name; create it when missing and create is set
 * (else -1 with errnum ENOENT: "no workspace NAME"). */
int sb_ws_open(struct sb_ws_store *st, const char *client, const char *name, bool create, struct sb_ws *ws,
	       struct sb_error *err);
/* Release (when held) and close. */
void sb_ws_close(struct sb_ws *ws);

/* What holds a workspace: a session of a sagebox process. */
struct sb_ws_holder {
	long pid;
	char session[80];                /* "" while it is being opened, or for the CLI */
	uint64_t cap;
	long long since;                 /* unix time */
};

/* Take ws for one session (at most one at a time, across processes): -1
 * with err naming the holder when another session (or a `sagebox
 * workspaces` command) has it. Then finishes an interrupted sync (its
 * journal replayed or its stage discarded) and counts what the files take.
 * cap: what the holder may fill (written into the lock for other
 * processes' arithmetic). */
int sb_ws_hold(struct sb_ws *ws, const struct sb_ws_holder *h, struct sb_error *err);
/* Name the session that holds it (once its id is known). */
void sb_ws_holder_set(struct sb_ws *ws, const char *session);
/* Let go: meta.json updated (last used), the lock released. */
void sb_ws_release(struct sb_ws *ws);

/* The cap a new hold of client's name may have: the smaller of
 * per_workspace and what total leaves after the client's other workspaces
 * (each counted at its cap while a session holds it, at its size
 * otherwise). Call under sb_ws_client_lock. */
uint64_t sb_ws_cap_for(struct sb_ws_store *st, const char *client, const char *name, uint64_t per_workspace,
		       uint64_t total);
/* flock of CLIENT/+lock, held while caps are worked out and a hold taken,
 * so two opens of one client cannot both count on the same room. Returns
 * the fd (release with sb_ws_client_unlock), -1 with err. */
int sb_ws_client_lock(struct sb_ws_store *st, const char *client, struct sb_error *err);
void sb_ws_client_unlock(int fd);

/* {name, bytes, entries, last_used (unix, 0 unknown), lang, held_by
 * ({session, pid} or null), state ({saved_at, lang, saved, not_saved} or
 * null)} of one workspace. */
json_t *sb_ws_info(struct sb_ws_store *st, const char *client, const char *name);
/* The client's workspaces, sorted by name: an array of sb_ws_info. */
json_t *sb_ws_list(struct sb_ws_store *st, const char *client);
/* The clients that have workspaces (for the CLI). */
json_t *sb_ws_clients(struct sb_ws_store *st);
/* Remove a workspace (refused while a session holds it). */
int sb_ws_remove(struct sb_ws_store *st, const char *client, const char *name, struct sb_error *err);

/* meta.json written from ws (bytes, entries, now as last used, lang when
 * not NULL). */
void sb_ws_meta_write(struct sb_ws *ws, const char *lang);
/* state.json: what a save reported (stolen), with saved_at now. */
void sb_ws_state_write(struct sb_ws *ws, json_t *report);

#endif
