/* A session on a named workspace: restore, sync, save (see sess_ws.h). */
#include "runner/sessions/sess_ws.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "runner/sessions/sess_feed.h"
#include "util/clock.h"
#include "workspaces/sync.h"
#include "workspaces/transfer.h"

/* A sync's or restore's controller side that sends nothing for this long
 * is stuck: the session is ended. */
#define QUIET_MS 60000

int sess_ws_attach(struct sess *s, struct sb_ws *ws, bool project, struct sb_error *err)
{
	struct sess_ws *w = calloc(1, sizeof *w);
	if (!w) {
		sb_ws_close(ws);
		return sb_fail(err, "out of memory");
	}
	w->ws = *ws;
	ws->dir_fd = ws->files_fd = ws->lock_fd = -1;
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->q, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->project = project;
	s->ws = w;
	return sess_ws_syncer_start(s, err);
}

void sess_ws_free(struct sess_ws *w)
{
	if (!w)
		return;
	sb_ws_close(&w->ws);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->q);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* ---- restore: the store's files as put frames (raw bytes after each) */
struct putter {
	struct sess *s;
	json_int_t id;
};

static int put(void *ctx, const struct sb_ws_item *it, uint64_t offset, const char *data, size_t n)
{
	struct putter *p = ctx;
	json_t *h;
	if (n)
		h = json_pack("{s:s, s:I, s:s, s:I, s:I}", "type", "put", "id", p->id, "kind", "data", "offset",
			      (json_int_t)offset, "code_bytes", (json_int_t)n);
	else if (it->dir)
		h = json_pack("{s:s, s:I, s:s, s:s}", "type", "put", "id", p->id, "kind", "dir", "path", it->path);
	else
		h = json_pack("{s:s, s:I, s:s, s:s, s:b, s:I}", "type", "put", "id", p->id, "kind", "file", "path",
			      it->path, "exec", it->exec, "size", (json_int_t)it->size);
	return sess_send(p->s, h, data, n);
}

int sess_ws_restore_files(struct sess *s, json_t **report, struct sb_error *err)
{
	struct sess_ws *w = s->ws;
	*report = NULL;
	struct sess_inbox in;
	if (sess_route(s, &in))
		return sb_fail(err, "out of memory");
	pthread_mutex_lock(&w->lock);
	struct putter p = {s, in.id};
	json_t *skipped = json_array();
	unsigned more = 0;
	int rc = sb_ws_restore_walk(&w->ws, w->project ? "project" : NULL, put, &p, skipped, &more, err);
	if (!rc && sess_send(s, json_pack("{s:s, s:I, s:s}", "type", "put", "id", in.id, "kind", "end"), NULL, 0))
		rc = -1;
	json_t *reply = NULL;
	uint64_t deadline = sb_now_ms() + QUIET_MS;
	while (!rc && !reply) {
		struct sess_frame *f = sess_pop(s, &in);
		if (f) {
			if (f->type == SB_WP_REPLY)
				reply = json_incref(f->hdr);
			sess_frame_free(f);
			continue;
		}
		if (sess_dead(s, NULL, 0) || sb_now_ms() >= deadline) {
			if (!sess_dead(s, NULL, 0))
				sess_kill(s, false, "it did not take its workspace's files within %d s", QUIET_MS / 1000);
			rc = -1;
			break;
		}
		sess_wait(&in, -1, (int)(deadline - sb_now_ms()));
	}
	sess_unroute(s, &in);
	pthread_mutex_unlock(&w->lock);
	if (rc) {
		json_decref(skipped);
		if (sess_dead(s, NULL, 0))
			sess_ended_error(s, err);
		else if (!err->msg[0])
			sb_fail(err, "the session stopped taking workspace %s's files", w->ws.name);
		return -1;
	}
	json_t *errors = json_object_get(reply, "errors");
	*report = json_pack("{s:O, s:O, s:O, s:O, s:o, s:I}", "files", json_object_get(reply, "files"), "dirs",
			    json_object_get(reply, "dirs"), "bytes", json_object_get(reply, "bytes"), "errors",
			    json_is_array(errors) ? errors : json_array(), "skipped", skipped, "skipped_more",
			    (json_int_t)more);
	json_decref(reply);
	w->restored = true;
	return 0;
}

/* ---- the variables */
int sess_ws_state(struct sess *s, const char *op, unsigned timeout_s, json_t **state, struct sb_error *err)
{
	*state = NULL;
	struct sb_job job = {.kind = SB_JOB_SESSION, .lang = s->lang, .code = "", .code_len = 0};
	sb_limits_default(&job.limits);
	job.limits.timeout_s = timeout_s;
	struct sb_result res;
	struct sb_session_verdict v;
	memset(&v, 0, sizeof v);
	sb_result_init(&res);
	if (sess_run_op(s, op, &job, &res, &v, state))
		sess_ws_note_done(s, v.ws_changed);
	int rc = 0;
	if (v.closed) {
		sb_fail(err, "session %s ended: %s", s->id, v.reason);
		rc = -1;
	} else if (!*state) {
		const char *why = res.internal_error ? res.internal_error
				  : res.timed_out    ? "it took longer than its time limit, so the interpreter was restarted"
				  : v.restarted	     ? v.reason
						     : "the interpreter gave no report";
		*state = json_pack("{s:s}", "error", why);
	}
	if (v.restarted && *state)
		json_object_set_new(*state, "restarted", json_string(v.reason));
	sb_result_free(&res);
	return rc;
}

void sess_ws_finish(struct sess *s, unsigned save_s)
{
	if (!s->ws || !s->ws->restored || sess_dead(s, NULL, 0))
		return;
	sess_ws_flush(s);
	/* The variables, when nothing else has the interpreter and they
	 * changed since the last save; a call running now keeps it. */
	if (s->lang != SB_LANG_SHELL && !s->ws->saved) {
		pthread_mutex_lock(&s->lock);
		bool free_now = !s->busy && !s->dead;
		if (free_now)
			s->busy = true;
		pthread_mutex_unlock(&s->lock);
		if (free_now) {
			json_t *state = NULL;
			struct sb_error err = {0};
			if (sess_ws_state(s, "save", save_s, &state, &err) == 0 && !json_object_get(state, "error"))
				sb_ws_state_write(&s->ws->ws, json_incref(state));
			json_decref(state);
			sess_give(s);
		}
	}
	json_t *report = NULL;
	struct sb_error err = {0};
	sess_ws_sync(s, true, &report, &err);
	json_decref(report);
}

void sess_ws_describe(struct sess *s, json_t *sandbox)
{
	json_t *sess = json_object_get(sandbox, "session");
	if (s->ws && sess)
		json_object_update_new(sess, json_pack("{s:s, s:I}", "workspace_name", s->ws->ws.name, "workspace_cap_bytes",
						       (json_int_t)s->ws->ws.cap));
}
