/* The session tools' operations (open, list, usage, close, reset, run),
 * and the making and ending of everything behind struct sb_sessions. Ids,
 * owners and limits are the registry's (registry.c), expiry the reaper's
 * (reaper.c), the ready spares spares.c's, a session's sandbox sess.c's,
 * a call's supervision sess_feed.c's; the jobs on the sessions are the
 * tenant's (runner/jobs/jobs.h), told when the handle ends or a client
 * goes. */
#include "runner/sessions/sessions.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/sessions/sess_feed.h"
#include "runner/sessions/sess_ws.h"
#include "runner/sessions/sessreg.h"
#include "sandbox/sandbox.h"
#include "util/clock.h"

/* How long a memory figure may take (session_list). */
#define STAT_TIMEOUT_MS 2000

static void stop_threads(struct sb_sessions *ss)
{
	sb_reaper_stop(&ss->reaper);
	pthread_mutex_lock(&ss->reg.lock);
	ss->reg.stopping = true;
	pthread_mutex_unlock(&ss->reg.lock);
	if (ss->spares)
		sb_spares_stop(ss->spares);
}

struct sb_sessions *sb_sessions_new(const struct sb_config *cfg, const struct sb_backend *be,
				    const struct sb_sessions_tenant *tenant)
{
	struct sb_sessions *ss = calloc(1, sizeof *ss);
	if (!ss)
		return NULL;
	ss->cfg = cfg;
	ss->be = be;
	ss->tenant = tenant;
	pthread_mutex_init(&ss->store_lock, NULL);
	reg_init(&ss->reg, cfg);
	ss->spares = sb_spares_new(cfg, be);
	if (!ss->spares || sb_reaper_start(&ss->reaper, &ss->reg, cfg->session_idle_minutes,
					       tenant ? tenant->prune_locked : NULL, ss)) {
		sb_spares_free(ss->spares);
		reg_fini(&ss->reg);
		pthread_mutex_destroy(&ss->store_lock);
		free(ss);
		return NULL;
	}
	return ss;
}

void sb_sessions_free(struct sb_sessions *ss)
{
	if (!ss)
		return;
	stop_threads(ss);
	/* A clean stop keeps what named workspaces hold (their variables and
	 * files); then every sandbox (their jobs see their sessions end),
	 * then the jobs' threads, then the memory. */
	ws_finish_all(ss);
	pthread_mutex_lock(&ss->reg.lock);
	for (struct sess *s = ss->reg.sessions; s; s = s->next)
		sess_kill(s, true, "sagebox stopped");
	pthread_mutex_unlock(&ss->reg.lock);
	if (ss->tenant)
		ss->tenant->stop_all(ss);
	while (ss->reg.sessions) {
		struct sess *s = ss->reg.sessions;
		ss->reg.sessions = s->next;
		reg_put(&ss->reg, s);
	}
	sb_spares_free(ss->spares);
	reg_fini(&ss->reg);
	if (ss->store_open)
		sb_ws_store_close(&ss->store);
	pthread_mutex_destroy(&ss->store_lock);
	free(ss);
}

void sb_sessions_end_owner(struct sb_sessions *ss, const char *owner)
{
	if (ss->tenant)
		ss->tenant->end_owner(ss, owner);
	for (;;) {
		struct sess *found = NULL;
		pthread_mutex_lock(&ss->reg.lock);
		for (struct sess *s = ss->reg.sessions; s && !found; s = s->next)
			if (!s->anonymous && !strcmp(s->owner, owner)) {
				s->refs++;
				found = s;
			}
		pthread_mutex_unlock(&ss->reg.lock);
		if (!found)
			return;
		reg_close(&ss->reg, found, "ended: its client disconnected");
		reg_put(&ss->reg, found);
	}
}

unsigned sb_sessions_in_use(struct sb_sessions *ss)
{
	pthread_mutex_lock(&ss->reg.lock);
	unsigned n = reg_count_locked(&ss->reg, REG_SESSIONS, NULL) + reg_count_locked(&ss->reg, REG_JOBS, NULL);
	pthread_mutex_unlock(&ss->reg.lock);
	return n;
}

/* ---- the session tools */
int sb_session_open(struct sb_sessions *ss, const char *owner, const struct sb_session_open_opts *o,
		    struct sb_session_opened *out, struct sb_error *err)
{
	out->workspace = NULL;
	if (!ss->cfg->max_sessions) {
		sb_fail(err, "sessions are turned off here (max_sessions = 0)");
		return sb_hint(err, "use the run tools without session_id; the user can enable sessions with "
				    "--max-sessions N");
	}
	/* Refused at once when there is no room; reg_new_session checks again
	 * as it lists the new session, under the same hold of the lock. */
	pthread_mutex_lock(&ss->reg.lock);
	int full = reg_room_locked(&ss->reg, REG_SESSIONS, owner, err);
	pthread_mutex_unlock(&ss->reg.lock);
	if (full)
		return -1;
	struct sess *s;
	if (o->workspace)
		s = ws_session_open(ss, owner, o, &out->from_spare, &out->workspace, err);
	else
		s = reg_new_session(&ss->reg, ss->spares, owner, o->lang, false, &out->from_spare, err);
	if (!s)
		return -1;
	snprintf(out->id, sizeof out->id, "%s", s->id);
	sb_worker_net_serves(s->w, owner, "session", s->id);
	out->lang = o->lang;
	out->idle_expiry_s = ss->cfg->session_idle_minutes * 60;
	reg_put(&ss->reg, s);
	return 0;
}

/* The interpreter's memory, asked of the controller (which answers even
 * while a call runs). */
static void memory_of(struct sess *s, json_t *o)
{
	json_t *reply = NULL;
	struct sb_error err = {0};
	if (sess_request(s, json_pack("{s:s}", "type", "stat"), NULL, 0, STAT_TIMEOUT_MS, SESS_MAY_WAIT, NULL, NULL, &reply, &err) ||
	    !json_is_true(json_object_get(reply, "ok"))) {
		json_object_set_new(o, "memory_bytes", json_null());
	} else {
		json_object_set(o, "memory_bytes", json_object_get(reply, "rss_bytes"));
		json_object_set(o, "private_memory_bytes", json_object_get(reply, "private_bytes"));
	}
	json_decref(reply);
}

json_t *sb_session_list(struct sb_sessions *ss, const char *owner)
{
	struct sess *mine[64];
	size_t n = 0;
	pthread_mutex_lock(&ss->reg.lock);
	for (struct sess *s = ss->reg.sessions; s && n < 64; s = s->next)
		if (!s->anonymous && !strcmp(s->owner, owner)) {
			s->refs++;
			mine[n++] = s;
		}
	pthread_mutex_unlock(&ss->reg.lock);
	json_t *arr = json_array();
	uint64_t now = sb_now_ms();
	for (size_t i = n; i-- > 0;) {
		struct sess *s = mine[i];
		json_t *o = json_pack("{s:s, s:s, s:I, s:I}", "session_id", s->id, "lang", sb_lang_name(s->lang), "age_s",
				      (json_int_t)(sb_ms_since(s->created_ms, now) / 1000), "idle_s",
				      (json_int_t)(sb_ms_since(atomic_load(&s->used_ms), now) / 1000));
		pthread_mutex_lock(&s->lock);
		json_object_set_new(o, "busy", json_boolean(s->busy));
		pthread_mutex_unlock(&s->lock);
		memory_of(s, o);
		json_t *jobs = json_array();
		reg_session_jobs(&ss->reg, s->id, jobs);
		json_object_set_new(o, "running_jobs", jobs);
		json_array_append_new(arr, o);
		reg_put(&ss->reg, s);
	}
	return json_pack("{s:o, s:I, s:I, s:I}", "sessions", arr, "max_sessions", (json_int_t)ss->cfg->max_sessions,
			 "max_sessions_total", (json_int_t)ss->cfg->max_sessions_total, "idle_expiry_s",
			 (json_int_t)ss->cfg->session_idle_minutes * 60);
}

json_t *sb_session_usage(struct sb_sessions *ss, const char *owner)
{
	unsigned n = reg_count(&ss->reg, REG_SESSIONS, owner);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "sessions", (json_int_t)n, "max_sessions",
			 (json_int_t)ss->cfg->max_sessions, "max_sessions_total", (json_int_t)ss->cfg->max_sessions_total,
			 "running_jobs", (json_int_t)reg_count(&ss->reg, REG_JOBS, owner), "max_jobs",
			 (json_int_t)ss->cfg->max_jobs, "max_jobs_total", (json_int_t)ss->cfg->max_jobs_total);
}

int sb_session_close(struct sb_sessions *ss, const char *owner, const char *id, struct sb_error *err)
{
	struct sess *s;
	if (reg_get(&ss->reg, owner, id, &s, err))
		return -1;
	reg_close(&ss->reg, s, "was closed with session_close");
	reg_put(&ss->reg, s);
	return 0;
}

int sb_session_reset(struct sb_sessions *ss, const char *owner, const char *id, struct sb_error *err)
{
	struct sess *s;
	if (reg_get(&ss->reg, owner, id, &s, err))
		return -1;
	int rc = sess_take(s, -1, err);
	json_t *reply = NULL;
	if (!rc) {
		rc = sess_request(s, json_pack("{s:s}", "type", "reset"), NULL, 0, 60000, 0, NULL, NULL, &reply, err);
		sess_interacts_forget(s);
		sess_give(s);
	}
	json_decref(reply);
	reg_put(&ss->reg, s);
	return rc ? -1 : 0;
}

int sb_session_run(struct sb_sessions *ss, const char *owner, const char *id, const struct sb_job *job,
		   const struct sb_run_hooks *hooks, struct sb_result *res, struct sb_session_verdict *v,
		   struct sb_error *err)
{
	struct sess *s;
	memset(v, 0, sizeof *v);
	if (reg_get(&ss->reg, owner, id, &s, err))
		return -1;
	if (job->interact && sess_interact_refused(s, job, err)) {
		reg_put(&ss->reg, s);
		return -1;
	}
	if (!sess_takes(s->lang, job->lang)) {
		sb_fail(err, "session %s is a %s session: it cannot run %s code", id, sb_lang_name(s->lang),
			sb_lang_name(job->lang));
		sb_hint(err, "use the tool for %s (a Sage session takes run_sagemath and run_python), or open a "
			     "%s session with session_open",
			sb_lang_name(s->lang), sb_lang_name(job->lang));
		reg_put(&ss->reg, s);
		return -1;
	}
	sb_result_init(res);
	res->timeout_s = job->limits.timeout_s;
	res->max_bytes_per_stream = job->limits.output_bytes;
	int taken = sess_take(s, hooks ? hooks->cancel_fd : -1, err);
	if (taken < 0) {
		reg_put(&ss->reg, s);
		return -1;
	}
	if (taken == 0 && hooks && hooks->admit && !hooks->admit(hooks->ctx)) {
		sess_give(s);
		taken = 1; /* cancelled while it waited for its job slot */
	}
	if (taken == 1) {
		res->cancelled = true; /* cancelled while it waited for its turn */
	} else {
		atomic_store(&s->used_ms, sb_now_ms());
		if (sess_run_call(s, job, hooks, res, v))
			sess_ws_note_done(s, v->ws_changed);
		sess_ws_describe(s, res->sandbox);
		sess_interacts_keep(s, res, v->restarted);
		sess_give(s);
		if (s->ws && !v->closed)
			ws_after_call(s, v);
		if (v->closed)
			reg_close(&ss->reg, s, v->reason);
	}
	reg_put(&ss->reg, s);
	return 0;
}

void sb_sessions_metrics(struct sb_sessions *ss, bool by_client)
{
	reg_metrics(&ss->reg, by_client);
	sb_spares_metrics(ss->spares);
}
