/* A workspace's sync: what a session's /work became, written to the store
 * so that a SIGKILL of sagebox at any moment leaves either the state before
 * the sync or the state after it, never a mix.
 *
 * The session's controller (driver/wsync.py) walks /work after a call and
 * sends what changed since the last sync as ops, one frame each (all of it
 * untrusted: the controller runs in the sandbox beside the session's code):
 *
 *   {op: "del",  path}                a file or tree that is gone
 *   {op: "dir",  path, mode}          a directory (made; a file there replaced)
 *   {op: "file", path, mode, size}    a regular file of size bytes, then
 *   {op: "data", offset} + bytes      its data extents (holes stay holes)
 *   {op: "skip", path, why}           what /work held that is not kept
 *                                     (a symlink, FIFO, socket, device,
 *                                     another name of a hard-linked file)
 *
 * The host checks every op (paths by sb_fs_relpath_ok, each path once,
 * data within its file and in order, only executable-or-not of the mode
 * kept, no byte past the workspace's cap counting what the sync replaces
 * and removes, at most SB_WS_ENTRIES_MAX entries) and writes new files
 * into stage/ under names of its own. sb_ws_sync_end then writes the
 * journal (the ops, with each file's stage name) and renames it into
 * place: that rename is the commit. The journal is applied (renames from
 * stage/ into files/, directories made, trees removed, never following a
 * link) and removed; an interrupted apply is replayed by the next hold
 * (sb_ws_journal_recover), a sync that never committed is discarded. */
#ifndef SAGEBOX_WORKSPACES_SYNC_H
#define SAGEBOX_WORKSPACES_SYNC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "workspaces/ws.h"

/* The largest apparent size of a file kept (a sparse file may be larger
 * than the cap; the controller leaves bigger ones out, wsync.py). */
#define SB_WS_FILE_MAX (1ull << 40)
/* What one sync keeps of the skipped entries' names (the rest counted). */
#define SB_WS_SKIPS_SHOWN 20

struct sb_ws_sync;

/* Begin a sync of ws (held). full: the controller sends the whole of
 * /work; whatever it does not send is removed. NULL with err. */
struct sb_ws_sync *sb_ws_sync_begin(struct sb_ws *ws, bool full, struct sb_error *err);
/* One op (hdr: the frame's header, payload its bytes). -1 when the op is
 * refused: the sync is then spoiled (sb_ws_sync_end fails with why) and
 * later ops are ignored. A refusal because the cap would be passed is
 * errnum ENOSPC; any other is the controller breaking the protocol. */
int sb_ws_sync_op(struct sb_ws_sync *s, const json_t *hdr, const char *payload, size_t n);
/* Whether an op was refused (and why, into err when not NULL). */
bool sb_ws_sync_failed(const struct sb_ws_sync *s, struct sb_error *err);
/* Commit and apply, update ws's counts and meta.json; free s. report:
 * {files, dirs, deleted, bytes, skipped: [{path, why}], skipped_more}
 * (new; NULL when not wanted). -1 with err (nothing of this sync is kept:
 * the store is as before it). */
int sb_ws_sync_end(struct sb_ws_sync *s, json_t **report, struct sb_error *err);
/* Discard it (its stage removed) and free s. */
void sb_ws_sync_abort(struct sb_ws_sync *s);
#endif
