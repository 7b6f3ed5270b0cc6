/* How a session is opened: what sb_session_open (sessions.h) takes, and
 * the workspace side (sessions_ws.h) with it. A header of its own so that
 * the workspace side needs nothing of the sessions' handle above it. */
#ifndef SAGEBOX_SESSIONS_OPEN_OPTS_H
#define SAGEBOX_SESSIONS_OPEN_OPTS_H

#include <stdbool.h>

#include "core/job.h"

/* How to open one: on a named workspace kept on disk (workspaces/store.h)
 * of the client ws_client ("local", "token-NAME"), its saved variables
 * loaded when restore. NULL workspace: a tmpfs that goes with the session. */
struct sb_session_open_opts {
	enum sb_lang lang;
	const char *workspace;
	const char *ws_client;
	bool restore;
};

#endif
