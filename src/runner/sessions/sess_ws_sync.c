/* A workspace session's syncs, in the order they were asked (see
 * sess_ws_sync.h). A sync is asked by sending the controller a `sync` request
 * with an inbox of its own (held: the pump waits for the disk rather than
 * ending the session as a flood); the session's syncer thread takes the
 * requests one at a time, in the order they went out, which is the order
 * the controller answers them in: each answer's ops are checked and staged
 * as they come (workspaces/sync.h), committed, and acknowledged (`synced`)
 * so that the controller takes what it sent as the base of its next one.
 *
 * A call's changes are asked for before the call's result goes back (in
 * the call's thread, right after its done frame), so the controller syncs
 * before it can see the next call; the result does not wait for the disk.
 * session_save, a background job's end and a close ask the same way and
 * wait for their own answer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/sessions/sess_ws_sync.h"
#include "util/clock.h"
#include "workspaces/sync.h"

/* A sync's controller side that sends nothing for this long is stuck: the
 * session is ended. */
#define QUIET_MS 60000

struct ws_req {
	struct sess_inbox in;
	struct ws_req *next;
	uint64_t seq;                /* its place among the session's syncs */
	bool waited;                 /* its asker waits and frees it; else the syncer does */
	bool done;
	int rc;
	json_t *report;
	struct sb_error err;
};

/* Under w->q: the request sent and queued, in one step (the queue's order
 * is the order the controller answers in). NULL when the session is gone. */
static struct ws_req *ask_locked(struct sess *s)
{
	struct sess_ws *w = s->ws;
	struct ws_req *r = calloc(1, sizeof *r);
	if (!r || sess_route(s, &r->in)) {
		free(r);
		return NULL;
	}
	r->in.held = true;
	if (sess_send(s, json_pack("{s:s, s:I, s:b}", "type", "sync", "id", r->in.id, "full", 0), NULL, 0)) {
		sess_unroute(s, &r->in);
		free(r);
		return NULL;
	}
	r->seq = ++w->asked;
	struct ws_req **tail = &w->queue;
	while (*tail)
		tail = &(*tail)->next;
	*tail = r;
	pthread_cond_broadcast(&w->cv);
	return r;
}

/* "link (a symbolic link: ...); fifo (...); and 3 more" into out ("" when
 * the sync skipped nothing). */
static void skipped_note(char *out, size_t n, const json_t *report)
{
	size_t len = 0, i;
	json_t *v;
	out[0] = '\0';
	json_array_foreach(json_object_get(report, "skipped"), i, v) {
		int k = snprintf(out + len, n - len, "%s%s (%s)", i ? "; " : "",
				 json_string_value(json_object_get(v, "path")),
				 json_string_value(json_object_get(v, "why")));
		if (k < 0 || (size_t)k >= n - len)
			return;
		len += (size_t)k;
	}
	json_int_t more = json_integer_value(json_object_get(report, "skipped_more"));
	if (more && len)
		snprintf(out + len, n - len, "; and %lld more", (long long)more);
}

/* One answer: its ops staged, committed, acknowledged. */
static void consume(struct sess *s, struct ws_req *r)
{
	struct sess_ws *w = s->ws;
	pthread_mutex_lock(&w->lock);
	struct sb_ws_sync *sync = sb_ws_sync_begin(&w->ws, false, &r->err);
	bool replied = false, broken = false;
	uint64_t deadline = sb_now_ms() + QUIET_MS;
	while (!replied && !broken) {
		struct sess_frame *f = sess_pop(s, &r->in);
		if (!f) {
			if (sess_dead(s, NULL, 0) || sb_now_ms() >= deadline)
				break;
			sess_wait(&r->in, -1, (int)(deadline - sb_now_ms()));
			continue;
		}
		deadline = sb_now_ms() + QUIET_MS;
		if (f->type == SB_WP_REPLY) {
			replied = true;
		} else if (f->type == SB_WP_DATA && sync && sb_ws_sync_op(sync, f->hdr, f->payload, f->n) < 0) {
			struct sb_error why = {0};
			sb_ws_sync_failed(sync, &why);
			/* Over the cap, or the disk: the rest is read and
			 * dropped. Anything else is the controller breaking the
			 * protocol: it runs beside the session's code. */
			if (why.errnum == EPROTO) {
				sess_kill(s, false, "its controller broke the workspace protocol (%s)", why.msg);
				broken = true;
			}
		}
		sess_frame_free(f);
	}
	r->rc = -1;
	if (!replied) {
		sb_ws_sync_abort(sync);
		if (!sess_dead(s, NULL, 0))
			sess_kill(s, false, "it did not send its workspace's files within %d s", QUIET_MS / 1000);
		sess_ended_error(s, &r->err);
	} else if (sync) {
		r->rc = sb_ws_sync_end(sync, &r->report, &r->err);
	}
	if (replied) /* kept: the base of the next; not: the next sends it again */
		sess_send(s, json_pack("{s:s, s:I, s:b}", "type", "synced", "id", r->in.id, "ok", r->rc == 0), NULL, 0);
	if (r->rc && r->err.errnum == ENOSPC)
		sb_hint(&r->err, "the workspace keeps at most %llu bytes (workspace_size, and workspaces_total for all "
				 "of a client's): delete files in /work, then the next call saves the rest",
			(unsigned long long)w->ws.cap);
	sess_unroute(s, &r->in);
	pthread_mutex_unlock(&w->lock);
}

static void *syncer_main(void *arg)
{
	struct sess *s = arg;
	struct sess_ws *w = s->ws;
	pthread_mutex_lock(&w->q);
	for (;;) {
		while (!w->queue && !w->stop)
			pthread_cond_wait(&w->cv, &w->q);
		if (w->stop)
			break;
		struct ws_req *r = w->queue;
		w->queue = r->next;
		w->running = true;
		pthread_mutex_unlock(&w->q);
		consume(s, r);
		pthread_mutex_lock(&w->q);
		w->running = false;
		w->answered = r->seq;
		r->done = true;
		if (!r->waited) {
			/* a call's: its outcome is said with the next call's result */
			if (r->rc)
				snprintf(w->problem, sizeof w->problem, "%.300s%s%.290s", r->err.msg,
					 r->err.hint[0] ? "; " : "", r->err.hint);
			else
				skipped_note(w->skipped, sizeof w->skipped, r->report);
			json_decref(r->report);
			free(r);
		}
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->q);
	return NULL;
}

int sess_ws_syncer_start(struct sess *s, struct sb_error *err)
{
	struct sess_ws *w = s->ws;
	if (pthread_create(&w->syncer, NULL, syncer_main, s) != 0)
		return sb_fail(err, "cannot start a thread");
	w->syncer_started = true;
	return 0;
}

void sess_ws_stop(struct sess *s)
{
	struct sess_ws *w = s->ws;
	if (!w || !w->syncer_started)
		return;
	pthread_mutex_lock(&w->q);
	w->stop = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->q);
	pthread_join(w->syncer, NULL);
	w->syncer_started = false;
	/* The session is gone: what calls still asked cannot be answered. (No
	 * request of a waiter is left: a waiter holds a reference to the
	 * session, and this runs after the last one is dropped.) */
	while (w->queue) {
		struct ws_req *r = w->queue;
		w->queue = r->next;
		sess_unroute(s, &r->in);
		free(r);
	}
}

/* Under w->q: the notes of the syncs answered so far, set aside to be said
 * (an older note not yet said is kept, the newer dropped). */
static void set_aside_locked(struct sess_ws *w)
{
	if (!w->say_problem[0])
		snprintf(w->say_problem, sizeof w->say_problem, "%s", w->problem);
	if (!w->say_skipped[0])
		snprintf(w->say_skipped, sizeof w->say_skipped, "%s", w->skipped);
	w->problem[0] = w->skipped[0] = '\0';
}

void sess_ws_note_done(struct sess *s, bool changed)
{
	struct sess_ws *w = s->ws;
	if (!w)
		return;
	w->saved = false;
	pthread_mutex_lock(&w->q);
	uint64_t before = w->asked;
	while (w->answered < before && !w->stop)
		pthread_cond_wait(&w->cv, &w->q);
	set_aside_locked(w);
	if (changed && w->restored && !w->stop)
		ask_locked(s);
	pthread_mutex_unlock(&w->q);
}

int sess_ws_sync(struct sess *s, bool always, json_t **report, struct sb_error *err)
{
	(void)always; /* (the controller sends only what changed, nothing when nothing did) */
	struct sess_ws *w = s->ws;
	*report = NULL;
	if (!w || !w->restored)
		return 0;
	/* The caller holds a reference: the syncer runs until this request
	 * is answered (at once, when the session has ended). */
	pthread_mutex_lock(&w->q);
	struct ws_req *r = w->stop ? NULL : ask_locked(s);
	if (r)
		r->waited = true;
	while (r && !r->done)
		pthread_cond_wait(&w->cv, &w->q);
	pthread_mutex_unlock(&w->q);
	if (!r) {
		if (sess_dead(s, NULL, 0))
			sess_ended_error(s, err);
		else
			sb_fail(err, "out of memory");
		return -1;
	}
	int rc = r->rc;
	*report = r->report;
	if (rc)
		*err = r->err;
	free(r);
	return rc;
}

void sess_ws_flush(struct sess *s)
{
	struct sess_ws *w = s->ws;
	if (!w)
		return;
	pthread_mutex_lock(&w->q);
	while ((w->queue || w->running) && !w->stop)
		pthread_cond_wait(&w->cv, &w->q);
	pthread_mutex_unlock(&w->q);
}

void sess_ws_take_problem(struct sess *s, bool all, char *out, size_t n, char *skipped, size_t sn)
{
	struct sess_ws *w = s->ws;
	out[0] = skipped[0] = '\0';
	if (!w)
		return;
	pthread_mutex_lock(&w->q);
	if (all)
		set_aside_locked(w);
	snprintf(out, n, "%s", w->say_problem);
	snprintf(skipped, sn, "%s", w->say_skipped);
	w->say_problem[0] = w->say_skipped[0] = '\0';
	pthread_mutex_unlock(&w->q);
}
