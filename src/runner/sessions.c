/* The registry of sessions: random ids owned by clients, the limits per
 * client, idle expiry, a ready spare sandbox per language in use, and the
 * session tools' operations. Jobs are in jobs.c, a session's sandbox in
 * sess.c, a call's supervision in sess_feed.c. */
#include "runner/sessreg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "runner/sess_feed.h"
#include "sandbox/sandbox.h"
#include "util/clock.h"

/* How often the reaper looks for idle sessions and old jobs. */
#define REAP_EVERY_MS 1000
/* After a spare failed to start, wait this long before the maker tries
 * again on its own (an open that waits asks at once). */
#define SPARE_RETRY_MS 30000
/* How long a memory figure may take (session_list). */
#define STAT_TIMEOUT_MS 2000

int reg_new_id(char out[SB_SESSION_ID_LEN], const char *prefix)
{
	unsigned char r[16];
	/* Unguessable: a session id is the only key to a session (over HTTP
	 * also checked against the owner, but never guessable). */
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		return -1;
	int n = snprintf(out, SB_SESSION_ID_LEN, "%s", prefix);
	for (size_t i = 0; i < sizeof r; i++)
		n += snprintf(out + n, SB_SESSION_ID_LEN - (size_t)n, "%02x", r[i]);
	return 0;
}

static bool well_formed(const char *id, char prefix)
{
	if (!id || id[0] != prefix || id[1] != '_' || strlen(id) != SB_SESSION_ID_LEN - 1)
		return false;
	return strspn(id + 2, "0123456789abcdef") == SB_SESSION_ID_LEN - 3;
}

/* ---- references */
void reg_put(struct sb_sessions *ss, struct sess *s)
{
	pthread_mutex_lock(&ss->lock);
	bool last = --s->refs == 0;
	pthread_mutex_unlock(&ss->lock);
	if (last)
		sess_destroy(s);
}

static void remember(struct sb_sessions *ss, const struct sess *s, const char *why)
{
	struct tomb *t = &ss->tombs[ss->tomb_next++ % SB_TOMBS];
	snprintf(t->id, sizeof t->id, "%s", s->id);
	snprintf(t->owner, sizeof t->owner, "%s", s->owner);
	snprintf(t->why, sizeof t->why, "%s", why);
}

/* Under the lock: take s out of the list (the list's reference passes to
 * the caller). */
static bool unlist_locked(struct sb_sessions *ss, struct sess *s)
{
	for (struct sess **pp = &ss->list; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			return true;
		}
	return false;
}

void reg_close(struct sb_sessions *ss, struct sess *s, const char *why)
{
	pthread_mutex_lock(&ss->lock);
	bool listed = unlist_locked(ss, s);
	if (listed && !s->anonymous)
		remember(ss, s, why);
	pthread_mutex_unlock(&ss->lock);
	sess_kill(s, true, "%s", why);
	if (listed)
		reg_put(ss, s);
}

int reg_get(struct sb_sessions *ss, const char *owner, const char *id, struct sess **out, struct sb_error *err)
{
	*out = NULL;
	pthread_mutex_lock(&ss->lock);
	for (struct sess *s = ss->list; s && well_formed(id, 's'); s = s->next)
		if (!s->anonymous && !strcmp(s->id, id) && !strcmp(s->owner, owner)) {
			s->refs++;
			*out = s;
			break;
		}
	char why[300] = "";
	for (unsigned i = 0; !*out && i < SB_TOMBS; i++) {
		const struct tomb *t = &ss->tombs[i];
		if (t->id[0] && id && !strcmp(t->id, id) && !strcmp(t->owner, owner))
			snprintf(why, sizeof why, "%s", t->why);
	}
	pthread_mutex_unlock(&ss->lock);
	if (*out) {
		char ended[400];
		if (!sess_dead(*out, ended, sizeof ended))
			return 0;
		/* it died on its own (its sandbox failed): say so, forget it */
		reg_close(ss, *out, ended);
		sess_ended_error(*out, err);
		reg_put(ss, *out);
		*out = NULL;
		return -1;
	}
	if (why[0]) {
		sb_fail(err, "session %s %s", id, why);
		return sb_hint(err, "its variables and files are gone; open a new session with session_open");
	}
	/* Another client's session gets these words too: ids are not shared. */
	sb_fail(err, "unknown session id '%.80s': no open session of yours has it", id ? id : "");
	return sb_hint(err, "use an id that session_open returned (session_list shows them); sessions do not "
			    "survive a restart of sagebox; open one with session_open");
}

/* ---- spares */
static void *maker_main(void *arg)
{
	struct spare *sp = arg;
	struct sb_sessions *ss = sp->ss;
	pthread_mutex_lock(&ss->lock);
	while (!ss->stopping) {
		uint64_t now = sb_now_ms();
		bool retry_ok = !sp->failures || sp->waiting || now >= sp->failed_ms + SPARE_RETRY_MS;
		if (!sp->wanted || sp->ready || !retry_ok) {
			sb_cond_wait_ms(&ss->changed, &ss->lock, 1000);
			continue;
		}
		sp->making = true;
		pthread_mutex_unlock(&ss->lock);
		struct sb_error err = {0};
		struct sess *s = sess_spawn(ss->cfg, ss->be, sp->lang, 0, &err);
		pthread_mutex_lock(&ss->lock);
		sp->making = false;
		if (s && !ss->stopping) {
			s->refs = 1;
			sp->ready = s;
			sp->failures = 0;
		} else if (!s) {
			sp->err = err;
			sp->failed_ms = sb_now_ms();
			sp->failures++;
		}
		pthread_cond_broadcast(&ss->changed);
		if (s && ss->stopping) {
			pthread_mutex_unlock(&ss->lock);
			sess_destroy(s);
			pthread_mutex_lock(&ss->lock);
		}
	}
	pthread_mutex_unlock(&ss->lock);
	return NULL;
}

/* Under the lock: -1 with err when owner may not open one more session:
 * its own max_sessions, or max_sessions_total of every client together
 * (over HTTP many clients share one server: without a total, N clients
 * could start N * max_sessions sandboxes). Anonymous sessions (a job's
 * sandbox of its own) count as jobs, not here. */
/* Under the lock: open sessions of owner, or of every client (NULL). */
static unsigned sessions_of_locked(struct sb_sessions *ss, const char *owner)
{
	unsigned n = 0;
	for (struct sess *s = ss->list; s; s = s->next)
		n += !s->anonymous && (!owner || !strcmp(s->owner, owner));
	return n;
}

static int no_room_locked(struct sb_sessions *ss, const char *owner, struct sb_error *err)
{
	unsigned mine = sessions_of_locked(ss, owner), all = sessions_of_locked(ss, NULL);
	unsigned max = ss->cfg->max_sessions, total = ss->cfg->max_sessions_total;
	if (mine >= max) {
		sb_fail(err, "you already have %u open sessions, the most allowed (max_sessions = %u)", mine, max);
		return sb_hint(err, "close one you no longer need with session_close (session_list shows them)");
	}
	if (all >= total) {
		sb_fail(err, "the server already has %u open sessions, the most allowed for all clients together "
			     "(max_sessions_total = %u)", all, total);
		return sb_hint(err, "close one of yours you no longer need with session_close (session_list shows "
				    "them), or try again when other clients have closed theirs; the operator can raise "
				    "it with --max-sessions-total N");
	}
	return 0;
}

struct sess *reg_new_session(struct sb_sessions *ss, const char *owner, enum sb_lang lang, bool anonymous,
			     bool *from_spare, struct sb_error *err)
{
	struct spare *sp = &ss->spares[lang];
	pthread_mutex_lock(&ss->lock);
	sp->wanted = true;
	*from_spare = sp->ready != NULL;
	unsigned failures = sp->failures;
	sp->waiting++;
	pthread_cond_broadcast(&ss->changed);
	/* Waiting for the maker's start is never slower than starting one
	 * here: it began earlier, and two would compete for the CPU. */
	while (!sp->ready && !ss->stopping && sp->failures == failures)
		pthread_cond_wait(&ss->changed, &ss->lock);
	sp->waiting--;
	struct sess *s = ss->stopping ? NULL : sp->ready;
	if (!s && !ss->stopping) {
		*err = sp->err;
	} else if (s && !anonymous && no_room_locked(ss, owner, err)) {
		s = NULL; /* another open took the last place meanwhile; the spare stays ready */
	} else if (s) {
		sp->ready = NULL;
		if (reg_new_id(s->id, "s_")) {
			sp->ready = s;
			s = NULL;
			sb_fail(err, "getrandom failed: %s", strerror(errno));
		}
	} else {
		sb_fail(err, "sagebox is shutting down");
	}
	if (s) {
		snprintf(s->owner, sizeof s->owner, "%s", owner);
		s->anonymous = anonymous;
		s->refs = 2; /* the list's and the caller's */
		s->next = ss->list;
		ss->list = s;
		atomic_store(&s->used_ms, sb_now_ms());
		pthread_cond_broadcast(&ss->changed); /* the maker starts the next spare */
	}
	pthread_mutex_unlock(&ss->lock);
	if (s)
		sess_send(s, json_pack("{s:s, s:i}", "type", "claim", "id", 0), NULL, 0);
	return s;
}

/* ---- expiry */
static void *reaper_main(void *arg)
{
	struct sb_sessions *ss = arg;
	uint64_t idle_ms = (uint64_t)ss->cfg->session_idle_minutes * 60000;
	char why[160];
	snprintf(why, sizeof why, "expired after %u min idle and was closed", ss->cfg->session_idle_minutes);
	pthread_mutex_lock(&ss->lock);
	while (!ss->stopping) {
		sb_cond_wait_ms(&ss->changed, &ss->lock, REAP_EVERY_MS);
		uint64_t now = sb_now_ms();
		jobs_prune_locked(ss, now);
		struct sess *victim = NULL;
		for (struct sess *s = ss->list; s && !victim; s = s->next) {
			/* A session running a call or a job is in use, not idle. */
			if (!s->anonymous && !s->busy && !jobs_running_in(ss, s) &&
			    now - atomic_load(&s->used_ms) >= idle_ms) {
				victim = s;
				victim->refs++;
			}
		}
		if (victim) {
			pthread_mutex_unlock(&ss->lock);
			reg_close(ss, victim, why);
			reg_put(ss, victim);
			pthread_mutex_lock(&ss->lock);
		}
	}
	pthread_mutex_unlock(&ss->lock);
	return NULL;
}

static void stop_threads(struct sb_sessions *ss)
{
	pthread_mutex_lock(&ss->lock);
	ss->stopping = true;
	pthread_cond_broadcast(&ss->changed);
	pthread_mutex_unlock(&ss->lock);
	for (unsigned i = 0; i < ss->threads; i++)
		pthread_join(i < 3 ? ss->spares[i].maker : ss->reaper, NULL);
	ss->threads = 0;
}

struct sb_sessions *sb_sessions_new(const struct sb_config *cfg, const struct sb_backend *be)
{
	struct sb_sessions *ss = calloc(1, sizeof *ss);
	if (!ss)
		return NULL;
	ss->cfg = cfg;
	ss->be = be;
	pthread_mutex_init(&ss->lock, NULL);
	sb_cond_init(&ss->changed);
	for (int l = 0; l < 3; l++) {
		ss->spares[l].ss = ss;
		ss->spares[l].lang = (enum sb_lang)l;
		if (pthread_create(&ss->spares[l].maker, NULL, maker_main, &ss->spares[l]) != 0)
			break;
		ss->threads++;
	}
	if (ss->threads == 3 && pthread_create(&ss->reaper, NULL, reaper_main, ss) == 0)
		ss->threads++;
	if (ss->threads < 4) {
		stop_threads(ss);
		pthread_cond_destroy(&ss->changed);
		pthread_mutex_destroy(&ss->lock);
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
	/* Every sandbox first (their jobs see their sessions end), then the
	 * jobs' threads, then the memory. */
	pthread_mutex_lock(&ss->lock);
	for (struct sess *s = ss->list; s; s = s->next)
		sess_kill(s, true, "sagebox stopped");
	pthread_mutex_unlock(&ss->lock);
	jobs_stop_all(ss);
	while (ss->list) {
		struct sess *s = ss->list;
		ss->list = s->next;
		reg_put(ss, s);
	}
	for (int l = 0; l < 3; l++)
		sess_destroy(ss->spares[l].ready);
	pthread_cond_destroy(&ss->changed);
	pthread_mutex_destroy(&ss->lock);
	free(ss);
}

/* ---- the session tools */
int sb_session_open(struct sb_sessions *ss, const char *owner, enum sb_lang lang, struct sb_session_opened *out,
		    struct sb_error *err)
{
	if (!ss->cfg->max_sessions) {
		sb_fail(err, "sessions are turned off here (max_sessions = 0)");
		return sb_hint(err, "use the run tools without session_id; the user can enable sessions with "
				    "--max-sessions N");
	}
	/* Refused at once when there is no room; reg_new_session checks again
	 * as it lists the new session, under the same hold of the lock. */
	pthread_mutex_lock(&ss->lock);
	int full = no_room_locked(ss, owner, err);
	pthread_mutex_unlock(&ss->lock);
	if (full)
		return -1;
	struct sess *s = reg_new_session(ss, owner, lang, false, &out->from_spare, err);
	if (!s)
		return -1;
	snprintf(out->id, sizeof out->id, "%s", s->id);
	out->lang = lang;
	out->idle_expiry_s = ss->cfg->session_idle_minutes * 60;
	reg_put(ss, s);
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
	pthread_mutex_lock(&ss->lock);
	for (struct sess *s = ss->list; s && n < 64; s = s->next)
		if (!s->anonymous && !strcmp(s->owner, owner)) {
			s->refs++;
			mine[n++] = s;
		}
	pthread_mutex_unlock(&ss->lock);
	json_t *arr = json_array();
	uint64_t now = sb_now_ms();
	for (size_t i = n; i-- > 0;) {
		struct sess *s = mine[i];
		json_t *o = json_pack("{s:s, s:s, s:I, s:I}", "session_id", s->id, "lang", sb_lang_name(s->lang), "age_s",
				      (json_int_t)((now - s->created_ms) / 1000), "idle_s",
				      (json_int_t)((now - atomic_load(&s->used_ms)) / 1000));
		pthread_mutex_lock(&s->lock);
		json_object_set_new(o, "busy", json_boolean(s->busy));
		pthread_mutex_unlock(&s->lock);
		memory_of(s, o);
		json_t *jobs = json_array();
		jobs_session_ids(ss, s->id, jobs);
		json_object_set_new(o, "running_jobs", jobs);
		json_array_append_new(arr, o);
		reg_put(ss, s);
	}
	return json_pack("{s:o, s:I, s:I, s:I}", "sessions", arr, "max_sessions", (json_int_t)ss->cfg->max_sessions,
			 "max_sessions_total", (json_int_t)ss->cfg->max_sessions_total, "idle_expiry_s",
			 (json_int_t)ss->cfg->session_idle_minutes * 60);
}

json_t *sb_session_usage(struct sb_sessions *ss, const char *owner)
{
	pthread_mutex_lock(&ss->lock);
	unsigned n = sessions_of_locked(ss, owner);
	pthread_mutex_unlock(&ss->lock);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "sessions", (json_int_t)n, "max_sessions",
			 (json_int_t)ss->cfg->max_sessions, "max_sessions_total", (json_int_t)ss->cfg->max_sessions_total,
			 "running_jobs", (json_int_t)jobs_running_of(ss, owner), "max_jobs",
			 (json_int_t)ss->cfg->max_jobs, "max_jobs_total", (json_int_t)ss->cfg->max_jobs_total);
}

int sb_session_close(struct sb_sessions *ss, const char *owner, const char *id, struct sb_error *err)
{
	struct sess *s;
	if (reg_get(ss, owner, id, &s, err))
		return -1;
	reg_close(ss, s, "was closed with session_close");
	reg_put(ss, s);
	return 0;
}

int sb_session_reset(struct sb_sessions *ss, const char *owner, const char *id, struct sb_error *err)
{
	struct sess *s;
	if (reg_get(ss, owner, id, &s, err))
		return -1;
	int rc = sess_take(s, -1, err);
	json_t *reply = NULL;
	if (!rc) {
		rc = sess_request(s, json_pack("{s:s}", "type", "reset"), NULL, 0, 60000, 0, NULL, NULL, &reply, err);
		sess_give(s);
	}
	json_decref(reply);
	reg_put(ss, s);
	return rc ? -1 : 0;
}

/* A Sage session runs Sage and Python (both in its interpreter); the
 * others their own language only. */
static bool takes(enum sb_lang session, enum sb_lang call)
{
	return session == call || (session == SB_LANG_SAGE && call == SB_LANG_PYTHON);
}

int sb_session_run(struct sb_sessions *ss, const char *owner, const char *id, const struct sb_job *job,
		   const struct sb_run_hooks *hooks, struct sb_result *res, struct sb_session_verdict *v,
		   struct sb_error *err)
{
	struct sess *s;
	memset(v, 0, sizeof *v);
	if (reg_get(ss, owner, id, &s, err))
		return -1;
	if (!takes(s->lang, job->lang)) {
		sb_fail(err, "session %s is a %s session: it cannot run %s code", id, sb_lang_name(s->lang),
			sb_lang_name(job->lang));
		sb_hint(err, "use the tool for %s (a Sage session takes run_sagemath and run_python), or open a "
			     "%s session with session_open",
			sb_lang_name(s->lang), sb_lang_name(job->lang));
		reg_put(ss, s);
		return -1;
	}
	sb_result_init(res);
	res->timeout_s = job->limits.timeout_s;
	res->max_bytes_per_stream = job->limits.output_bytes;
	int taken = sess_take(s, hooks ? hooks->cancel_fd : -1, err);
	if (taken < 0) {
		reg_put(ss, s);
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
		sess_run_call(s, job, hooks, res, v);
		sess_give(s);
		if (v->closed)
			reg_close(ss, s, v->reason);
	}
	reg_put(ss, s);
	return 0;
}
