#include "runner/sessions/registry.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "metrics/metrics.h"
#include "runner/sessions/sess_ws.h"
#include "util/clock.h"

/* ---- ids */
int reg_new_id(const struct sb_registry *r, char out[SB_SESSION_ID_LEN], char kind)
{
	/* Unguessable: a session id is the only key to a session (over HTTP
	 * also checked against the owner, but never guessable). */
	return sb_handle_new(out, kind, sb_config_instance(r->cfg));
}

bool reg_id_ok(const char *id, char kind)
{
	return sb_handle_parse(id, kind, NULL);
}

bool reg_elsewhere(const struct sb_registry *r, const char *id, struct sb_error *err)
{
	char inst[SB_INSTANCE_MAX + 1];
	const char *self = sb_config_instance(r->cfg);
	if (!sb_handle_elsewhere(id, self, inst))
		return false;
	bool job = id[0] == SB_HANDLE_JOB;
	sb_fail(err, "%s %s ended with its instance %s (this is instance %s, which holds nothing of it)",
		job ? "job" : "session", id, inst, self);
	sb_hint(err, job ? "its output is lost; start the job again" : "open a new session with session_open");
	return true;
}

/* ---- tombstones */
void reg_tomb_add(struct reg_tombs *t, const char *id, const char *owner, const char *why)
{
	struct reg_tomb *e = &t->t[t->next++ % SB_TOMBS];
	snprintf(e->id, sizeof e->id, "%s", id);
	snprintf(e->owner, sizeof e->owner, "%s", owner);
	snprintf(e->why, sizeof e->why, "%s", why);
}

const char *reg_tomb_find(const struct reg_tombs *t, const char *id, const char *owner)
{
	const char *why = NULL;
	for (unsigned i = 0; id && i < SB_TOMBS; i++) {
		const struct reg_tomb *e = &t->t[i];
		if (e->id[0] && !strcmp(e->id, id) && !strcmp(e->owner, owner))
			why = e->why;
	}
	return why;
}

/* ---- quotas: per client, and of all clients together (over HTTP many
 * clients share one server: without a total, N clients could start N *
 * max_sessions sandboxes). */
static const struct quota_row {
	const char *what;          /* "you already have 3 <what>" */
	const char *setting;       /* the per-client setting; <setting>_total for all clients */
	size_t max, total;         /* where they are in struct sb_config */
	const char *hint_mine, *hint_all;
} quota_rows[] = {
	[REG_SESSIONS] = {"open sessions", "max_sessions", offsetof(struct sb_config, max_sessions),
			  offsetof(struct sb_config, max_sessions_total),
			  "close one you no longer need with session_close (session_list shows them)",
			  "close one of yours you no longer need with session_close (session_list shows them), or try "
			  "again when other clients have closed theirs; the operator can raise it with "
			  "--max-sessions-total N"},
	[REG_JOBS] = {"background jobs running", "max_jobs", offsetof(struct sb_config, max_jobs),
		      offsetof(struct sb_config, max_jobs_total),
		      "wait for one to finish (job_status) or cancel one with job_cancel",
		      "wait for one to finish (job_status) or cancel one of yours with job_cancel, or try again when "
		      "other clients' jobs have ended; the operator can raise it with --max-jobs-total N"},
};

static unsigned setting(const struct sb_config *cfg, size_t at)
{
	unsigned v;
	memcpy(&v, (const char *)cfg + at, sizeof v);
	return v;
}

int reg_quota_check(enum reg_quota q, unsigned mine, unsigned all, const struct sb_config *cfg, struct sb_error *err)
{
	const struct quota_row *row = &quota_rows[q];
	unsigned max = setting(cfg, row->max), total = setting(cfg, row->total);
	if (mine >= max) {
		sb_fail(err, "you already have %u %s, the most allowed (%s = %u)", mine, row->what, row->setting, max);
		return sb_hint(err, "%s", row->hint_mine);
	}
	if (all >= total) {
		sb_fail(err, "the server already has %u %s, the most allowed for all clients together (%s_total = %u)",
			all, row->what, row->setting, total);
		return sb_hint(err, "%s", row->hint_all);
	}
	return 0;
}

unsigned reg_count_locked(struct sb_registry *r, enum reg_quota q, const char *owner)
{
	unsigned n = 0;
	if (q == REG_SESSIONS) {
		/* Anonymous sessions (a job's sandbox of its own) count as jobs. */
		for (struct sess *s = r->sessions; s; s = s->next)
			n += !s->anonymous && (!owner || !strcmp(s->owner, owner));
	} else {
		for (struct reg_job *j = r->jobs; j; j = j->next)
			n += j->running && (!owner || !strcmp(j->owner, owner));
	}
	return n;
}

int reg_room_locked(struct sb_registry *r, enum reg_quota q, const char *owner, struct sb_error *err)
{
	return reg_quota_check(q, reg_count_locked(r, q, owner), reg_count_locked(r, q, NULL), r->cfg, err);
}

unsigned reg_count(struct sb_registry *r, enum reg_quota q, const char *owner)
{
	pthread_mutex_lock(&r->lock);
	unsigned n = reg_count_locked(r, q, owner);
	pthread_mutex_unlock(&r->lock);
	return n;
}

bool reg_job_in_locked(struct sb_registry *r, const struct sess *s)
{
	for (struct reg_job *j = r->jobs; j; j = j->next)
		if (j->running && j->s == s)
			return true;
	return false;
}

void reg_session_jobs(struct sb_registry *r, const char *session_id, json_t *into)
{
	pthread_mutex_lock(&r->lock);
	for (struct reg_job *j = r->jobs; j; j = j->next)
		if (j->running && !strcmp(j->session, session_id))
			json_array_append_new(into, json_string(j->id));
	pthread_mutex_unlock(&r->lock);
}

/* ---- the registry */
void reg_init(struct sb_registry *r, const struct sb_config *cfg)
{
	*r = (struct sb_registry){.cfg = cfg};
	pthread_mutex_init(&r->lock, NULL);
}

void reg_fini(struct sb_registry *r)
{
	pthread_mutex_destroy(&r->lock);
}

/* ---- references */
void reg_put(struct sb_registry *r, struct sess *s)
{
	pthread_mutex_lock(&r->lock);
	bool last = --s->refs == 0;
	pthread_mutex_unlock(&r->lock);
	if (last) {
		/* A named workspace is let go only once its sandbox is gone:
		 * nothing of this session can write it after another takes it. */
		struct sess_ws *w = s->ws;
		sess_ws_stop(s);
		sess_destroy(s);
		sess_ws_free(w);
	}
}

/* Under the lock: take s out of the list (the list's reference passes to
 * the caller). */
static bool unlist_locked(struct sb_registry *r, struct sess *s)
{
	for (struct sess **pp = &r->sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			return true;
		}
	return false;
}

void reg_close(struct sb_registry *r, struct sess *s, const char *why)
{
	pthread_mutex_lock(&r->lock);
	bool listed = unlist_locked(r, s);
	if (listed && !s->anonymous)
		reg_tomb_add(&r->tombs, s->id, s->owner, why);
	pthread_mutex_unlock(&r->lock);
	/* A named workspace's session keeps what it can first: its variables
	 * (when the interpreter is free) and its files. */
	if (listed && s->ws)
		sess_ws_finish(s, r->cfg->limits.timeout_s < WS_SAVE_AT_CLOSE_S ? r->cfg->limits.timeout_s
										 : WS_SAVE_AT_CLOSE_S);
	sess_kill(s, true, "%s", why);
	if (listed)
		reg_put(r, s);
}

int reg_get(struct sb_registry *r, const char *owner, const char *id, struct sess **out, struct sb_error *err)
{
	*out = NULL;
	pthread_mutex_lock(&r->lock);
	for (struct sess *s = r->sessions; s && reg_id_ok(id, SB_HANDLE_SESSION); s = s->next)
		if (!s->anonymous && !strcmp(s->id, id) && !strcmp(s->owner, owner)) {
			s->refs++;
			*out = s;
			break;
		}
	char why[300] = "";
	const char *ended = *out ? NULL : reg_tomb_find(&r->tombs, id, owner);
	if (ended)
		snprintf(why, sizeof why, "%s", ended);
	pthread_mutex_unlock(&r->lock);
	if (*out) {
		char died[400];
		if (!sess_dead(*out, died, sizeof died))
			return 0;
		/* it died on its own (its sandbox failed): say so, forget it */
		reg_close(r, *out, died);
		sess_ended_error(*out, err);
		reg_put(r, *out);
		*out = NULL;
		return -1;
	}
	if (why[0]) {
		sb_fail(err, "session %s %s", id, why);
		return sb_hint(err, "its variables and files are gone; open a new session with session_open");
	}
	if (reg_elsewhere(r, id, err))
		return -1;
	/* Another client's session gets these words too: ids are not shared. */
	sb_fail(err, "unknown session id '%.80s': no open session of yours has it", id ? id : "");
	return sb_hint(err, "use an id that session_open returned (session_list shows them); sessions do not "
			    "survive a restart of sagebox; open one with session_open");
}

/* ---- metrics */
void reg_metrics(struct sb_registry *r, bool by_client)
{
	sb_metric_clear(SB_M_SESSIONS_OPEN);
	for (int l = 0; l < 3; l++) /* every language has a series, 0 or not */
		if (!by_client)
			sb_metric_set(SB_M_SESSIONS_OPEN, 0, (const char *[]){sb_lang_name((enum sb_lang)l), "all"});
	pthread_mutex_lock(&r->lock);
	for (struct sess *s = r->sessions; s; s = s->next)
		if (!s->anonymous)
			sb_metric_add(SB_M_SESSIONS_OPEN, 1,
				      (const char *[]){sb_lang_name(s->lang), by_client ? s->owner : "all"});
	pthread_mutex_unlock(&r->lock);
}

/* ---- new sessions */
struct claim {
	struct sb_registry *r;
	const char *owner;
	bool anonymous;
};

/* Under the spares' lock: list the ready spare s as owner's, when there
 * is room; counted and listed under one hold of the registry's lock, so
 * that concurrent opens cannot overshoot a limit. */
static int claim_spare(void *ctx, struct sess *s, struct sb_error *err)
{
	struct claim *c = ctx;
	struct sb_registry *r = c->r;
	int rc = -1;
	pthread_mutex_lock(&r->lock);
	if (r->stopping) {
		sb_fail(err, "sagebox is shutting down");
	} else if (!c->anonymous && reg_room_locked(r, REG_SESSIONS, c->owner, err)) {
		/* another open took the last place meanwhile */
	} else if (reg_new_id(r, s->id, SB_HANDLE_SESSION)) {
		s->id[0] = '\0';
		sb_fail(err, "getrandom failed: %s", strerror(errno));
	} else {
		snprintf(s->owner, sizeof s->owner, "%s", c->owner);
		s->anonymous = c->anonymous;
		s->refs = 2; /* the list's and the caller's */
		s->next = r->sessions;
		r->sessions = s;
		atomic_store(&s->used_ms, sb_now_ms());
		rc = 0;
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

struct sess *reg_new_session_sized(struct sb_registry *r, const struct sb_backend *be, const char *owner,
				   enum sb_lang lang, uint64_t bytes, struct sb_error *err)
{
	struct sess *s = sess_spawn(r->cfg, be, lang, 0, bytes, err);
	struct claim c = {r, owner, false};
	if (s && claim_spare(&c, s, err)) {
		sess_destroy(s);
		return NULL;
	}
	if (s)
		sess_send(s, json_pack("{s:s, s:i}", "type", "claim", "id", 0), NULL, 0);
	return s;
}

struct sess *reg_new_session(struct sb_registry *r, struct sb_spares *sp, const char *owner, enum sb_lang lang,
			     bool anonymous, bool *from_spare, struct sb_error *err)
{
	struct claim c = {r, owner, anonymous};
	struct sess *s = sb_spares_take(sp, lang, claim_spare, &c, from_spare, err);
	if (s)
		sess_send(s, json_pack("{s:s, s:i}", "type", "claim", "id", 0), NULL, 0);
	return s;
}
