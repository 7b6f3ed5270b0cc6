/* The workspace side of the session tools: a session opened on a named
 * workspace (the store's hold, the cap, a sandbox whose /work has that
 * size, the files and variables restored), the sync after each call,
 * session_save, the client's list, and the save of every workspace
 * session when sagebox stops cleanly. The store is workspaces/, a
 * session's side of it sess_ws.c. */
#include "runner/sessions/sessions_ws.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runner/sessions/sess_ws.h"
#include "runner/sessions/sessreg.h"
#include "sandbox/sandbox.h"

/* The store, opened (made) at first use. NULL with err. */
static struct sb_ws_store *store(struct sb_sessions *ss, struct sb_error *err)
{
	pthread_mutex_lock(&ss->store_lock);
	if (!ss->store_open && sb_ws_store_open(&ss->store, true, err) == 0)
		ss->store_open = true;
	bool ok = ss->store_open;
	pthread_mutex_unlock(&ss->store_lock);
	return ok ? &ss->store : NULL;
}

static double mib(uint64_t b)
{
	return (double)b / (1 << 20);
}

static unsigned save_s(const struct sb_config *cfg)
{
	return cfg->limits.timeout_s < WS_SAVE_AT_CLOSE_S ? cfg->limits.timeout_s : WS_SAVE_AT_CLOSE_S;
}

/* Hold the workspace for a new session, with the cap its client may still
 * use. 0, or -1 with err (ws closed). */
static int hold(struct sb_sessions *ss, struct sb_ws_store *st, const struct sb_session_open_opts *o,
		struct sb_ws *ws, struct sb_error *err)
{
	const struct sb_config *cfg = ss->cfg;
	int cl = sb_ws_client_lock(st, o->ws_client, err);
	if (cl < 0)
		return -1;
	uint64_t cap = sb_ws_cap_for(st, o->ws_client, o->workspace, cfg->workspace_bytes, cfg->workspaces_total_bytes);
	struct sb_ws_holder h = {.pid = (long)getpid(), .cap = cap, .since = (long long)time(NULL)};
	int rc = sb_ws_open(st, o->ws_client, o->workspace, true, ws, err);
	if (!rc && (rc = sb_ws_hold(ws, &h, err)))
		sb_ws_close(ws);
	if (!rc && (cap < (1u << 20) || ws->bytes > cap)) {
		sb_fail(err, "workspace %s holds %.1f MiB, and its client may use only %.1f MiB more of its "
			     "workspaces_total (%s)", o->workspace, mib(ws->bytes), mib(cap), cfg->workspaces_total);
		sb_hint(err, "tell the user: `sagebox workspaces list` shows the workspaces, `sagebox workspaces rm "
			     "NAME` removes one, or raise workspaces_total");
		bool created = ws->created;
		sb_ws_close(ws);
		rc = created ? -2 : -1;
	}
	sb_ws_client_unlock(cl);
	if (rc == -2) /* (made by this open and refused: not kept; after the client's lock, which rm takes) */
		sb_ws_remove(st, o->ws_client, o->workspace, NULL);
	return rc ? -1 : 0;
}

struct sess *ws_session_open(struct sb_sessions *ss, const char *owner, const struct sb_session_open_opts *o,
			     bool *from_spare, json_t **report, struct sb_error *err)
{
	const struct sb_config *cfg = ss->cfg;
	*report = NULL;
	*from_spare = false;
	struct sb_ws_store *st;
	struct sb_ws ws;
	if (!sb_ws_name_check(o->workspace, err) || !(st = store(ss, err)) || hold(ss, st, o, &ws, err))
		return NULL;
	bool created = ws.created;
	uint64_t cap = ws.cap, bytes = ws.bytes;
	/* A spare's /work is workspace_size: a smaller cap needs a sandbox
	 * of its own, so that the code meets the cap as it writes. */
	struct sess *s = cap == cfg->workspace_bytes
				 ? reg_new_session(&ss->reg, ss->spares, owner, o->lang, false, from_spare, err)
				 : reg_new_session_sized(&ss->reg, ss->be, owner, o->lang, cap, err);
	bool project = sess_project_bound(cfg, ss->be);
	if (!s || sess_ws_attach(s, &ws, project, err)) {
		sb_ws_close(&ws);
		if (s) {
			reg_close(&ss->reg, s, "it could not be opened on its workspace");
			reg_put(&ss->reg, s);
		}
		return NULL;
	}
	json_t *files = NULL, *state = NULL;
	if (sess_ws_restore_files(s, &files, err))
		goto failed;
	sb_ws_holder_set(&s->ws->ws, s->id);
	sb_ws_meta_write(&s->ws->ws, sb_lang_name(o->lang));
	if (o->restore && o->lang == SB_LANG_SHELL) {
		state = json_pack("{s:s}", "error", "a shell session has no saved variables (its files are restored)");
	} else if (o->restore) {
		int rc = sess_take(s, -1, err);
		if (!rc) {
			rc = sess_ws_state(s, "restore", cfg->limits.timeout_s, &state, err);
			sess_give(s);
		}
		if (rc)
			goto failed;
	}
	*report = json_pack("{s:s, s:b, s:I, s:I, s:o, s:o?}", "name", o->workspace, "created", created, "cap_bytes",
			    (json_int_t)cap, "bytes", (json_int_t)bytes, "files", files, "state", state);
	return s;
failed:
	json_decref(files);
	json_decref(state);
	/* (its files never all reached /work: nothing goes back to the store) */
	reg_close(&ss->reg, s, "its workspace could not be restored");
	reg_put(&ss->reg, s);
	return NULL;
}

void ws_after_call(struct sess *s, struct sb_session_verdict *v)
{
	snprintf(v->workspace, sizeof v->workspace, "%s", s->ws->ws.name);
	/* The syncer saves this call's changes now; what the sync before it
	 * (the last call's) did not keep is said here, once. */
	char problem[600], skipped[600];
	sess_ws_take_problem(s, false, problem, sizeof problem, skipped, sizeof skipped);
	if (problem[0]) {
		v->kept_failed = true;
		snprintf(v->kept, sizeof v->kept, "%s", problem);
		return;
	}
	int n = 0;
	if (v->ws_changed)
		n = snprintf(v->kept, sizeof v->kept, "this call's changes are being saved");
	if (skipped[0] && n >= 0 && (size_t)n < sizeof v->kept)
		snprintf(v->kept + n, sizeof v->kept - (size_t)n, "%snot kept from the last call's: %.*s", n ? "; " : "",
			 (int)(sizeof v->kept - (size_t)n - 36), skipped);
}

int sb_session_save(struct sb_sessions *ss, const char *owner, const char *id, json_t **report,
		    struct sb_error *err)
{
	struct sess *s;
	*report = NULL;
	if (reg_get(&ss->reg, owner, id, &s, err))
		return -1;
	int rc = -1;
	json_t *state = NULL, *files = NULL;
	if (!s->ws) {
		sb_fail(err, "session %s is not on a named workspace, so its state has nowhere to be kept", id);
		sb_hint(err, "open a session with session_open {lang, workspace: \"NAME\"}: its files and saved "
			     "variables are kept on disk under that name");
	} else if (s->lang == SB_LANG_SHELL) {
		sb_fail(err, "session %s is a shell session: it has no variables to save (its files in /work are "
			     "kept after every call)", id);
	} else if (!sess_take(s, -1, err)) {
		sess_ws_flush(s);
		rc = sess_ws_state(s, "save", ss->cfg->limits.timeout_s, &state, err);
		sess_give(s);
	}
	if (!rc) {
		if (!json_object_get(state, "error")) {
			s->ws->saved = true;
			sb_ws_state_write(&s->ws->ws, json_incref(state));
		}
		struct sb_error serr = {0};
		sess_ws_flush(s);
		char problem[600], skipped[600];
		sess_ws_take_problem(s, true, problem, sizeof problem, skipped, sizeof skipped);
		if (sess_ws_sync(s, true, &files, &serr))
			files = json_pack("{s:s, s:s}", "error", serr.msg, "hint", serr.hint);
		/* (what the last call's sync did not keep: said here, as a call's result would) */
		if (files && skipped[0])
			json_object_set_new(files, "not_kept_before", json_string(skipped));
		if (files && problem[0])
			json_object_set_new(files, "error_before", json_string(problem));
		*report = json_pack("{s:o, s:o?}", "state", state, "files", files);
	} else {
		json_decref(state);
	}
	reg_put(&ss->reg, s);
	return rc;
}

json_t *sb_workspace_list(struct sb_sessions *ss, const char *ws_client)
{
	struct sb_error err = {0};
	struct sb_ws_store *st = store(ss, &err);
	json_t *list = st ? sb_ws_list(st, ws_client) : json_array();
	uint64_t used = 0;
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
		used += (uint64_t)json_integer_value(json_object_get(v, "bytes"));
	json_t *o = json_pack("{s:o, s:I, s:I, s:I}", "workspaces", list, "workspace_size_bytes",
			      (json_int_t)ss->cfg->workspace_bytes, "workspaces_total_bytes",
			      (json_int_t)ss->cfg->workspaces_total_bytes, "used_bytes", (json_int_t)used);
	if (!st)
		json_object_set_new(o, "error", json_string(err.msg));
	return o;
}

void ws_finish_all(struct sb_sessions *ss)
{
	struct sess *mine[256];
	size_t n = 0;
	pthread_mutex_lock(&ss->reg.lock);
	for (struct sess *s = ss->reg.sessions; s && n < 256; s = s->next)
		if (s->ws) {
			s->refs++;
			mine[n++] = s;
		}
	pthread_mutex_unlock(&ss->reg.lock);
	for (size_t i = 0; i < n; i++) {
		sess_ws_finish(mine[i], save_s(ss->cfg));
		reg_put(&ss->reg, mine[i]);
	}
}
