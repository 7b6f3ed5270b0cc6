/* A workspace's journal (sync.h: the ops of a committed sync, each new
 * file with its stage name) applied to its files/: renames from stage/,
 * directories made, trees removed, never following a link. Applying it
 * twice is applying it once, so a crash during an apply is mended by the
 * next hold replaying it. */
#ifndef SAGEBOX_WORKSPACES_JOURNAL_H
#define SAGEBOX_WORKSPACES_JOURNAL_H

#include <jansson.h>

#include "util/error.h"
#include "workspaces/ws.h"

/* Apply j (the journal's JSON) and remove the journal and stage. -1 with
 * err (the journal stays: the next hold completes it). */
int sb_ws_journal_apply(struct sb_ws *ws, const json_t *j, struct sb_error *err);
/* At a hold: a committed journal is applied, an uncommitted stage
 * removed. */
int sb_ws_journal_recover(struct sb_ws *ws, struct sb_error *err);

#endif
