/* The workspace side of the sessions (sessions_ws.c): a session on a
 * named workspace, session_save and the client's list. Below the sessions'
 * handle (sessions.c calls it; it calls nothing of sessions.c), so its
 * types come from open_opts.h and sessreg.h, not sessions.h. */
#ifndef SAGEBOX_SESSIONS_WS_H
#define SAGEBOX_SESSIONS_WS_H

#include <jansson.h>
#include <stdbool.h>

#include "runner/hooks.h"
#include "runner/sessions/open_opts.h"
#include "util/error.h"

struct sb_sessions;
struct sess;

/* Save a workspace session's variables (driver/state.py) and sync its
 * files; report: {saved, not_saved: [{name, why}], bytes, file, files:
 * the sync's report} (owned). -1 with err: no such session, not on a
 * named workspace, a shell session, or it ended. */
int sb_session_save(struct sb_sessions *ss, const char *owner, const char *id, json_t **report,
		    struct sb_error *err);
/* The client's workspaces on disk (workspaces/store.h's sb_ws_info each,
 * with held_by's session when it is one of owner's), and the caps:
 * {workspaces: [...], workspace_size_bytes, workspaces_total_bytes,
 * used_bytes}. */
json_t *sb_workspace_list(struct sb_sessions *ss, const char *ws_client);

/* For sessions.c. A session on owner's workspace o->workspace (held, its
 * files restored, its variables too when o->restore), listed, with a
 * reference; report: what the open did (sessions.h,
 * sb_session_opened.workspace). */
struct sess *ws_session_open(struct sb_sessions *ss, const char *owner, const struct sb_session_open_opts *o,
			     bool *from_spare, json_t **report, struct sb_error *err);
/* After a call in a workspace session: its changes synced, v says so. */
void ws_after_call(struct sess *s, struct sb_session_verdict *v);
/* sagebox stopping cleanly: every workspace session saved and synced. */
void ws_finish_all(struct sb_sessions *ss);

#endif
