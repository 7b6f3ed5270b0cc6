/* The registry of sessions and jobs (runner/sessions/registry.c), without sandboxes:
 * the limits per client and of all clients together (the words, the
 * setting, the order they are checked in), what counts towards them
 * (anonymous sessions and finished jobs do not), the tombstones of ended
 * sessions (their words, another owner's id stays unknown, the ring
 * forgets the oldest) and the lookup of a listed session by owner. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "runner/sessions/registry.h"

static struct sb_config cfg_with(unsigned max_s, unsigned total_s, unsigned max_j, unsigned total_j)
{
	struct sb_config c;
	memset(&c, 0, sizeof c);
	c.max_sessions = max_s;
	c.max_sessions_total = total_s;
	c.max_jobs = max_j;
	c.max_jobs_total = total_j;
	return c;
}

static void test_quota_words(void)
{
	struct sb_config c = cfg_with(2, 5, 3, 4);
	struct sb_error err = {0};
	CHECK(reg_quota_check(REG_SESSIONS, 1, 4, &c, &err) == 0);
	CHECK(err.msg[0] == '\0');

	CHECK(reg_quota_check(REG_SESSIONS, 2, 2, &c, &err) == -1);
	CHECK(!strcmp(err.msg, "you already have 2 open sessions, the most allowed (max_sessions = 2)"));
	CHECK_STR_CONTAINS(err.hint, "session_close");

	/* The client's own limit is named first, even when both are reached. */
	err = (struct sb_error){0};
	CHECK(reg_quota_check(REG_SESSIONS, 2, 5, &c, &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "(max_sessions = 2)");

	err = (struct sb_error){0};
	CHECK(reg_quota_check(REG_SESSIONS, 1, 5, &c, &err) == -1);
	CHECK(!strcmp(err.msg, "the server already has 5 open sessions, the most allowed for all clients together "
			       "(max_sessions_total = 5)"));
	CHECK_STR_CONTAINS(err.hint, "--max-sessions-total N");

	err = (struct sb_error){0};
	CHECK(reg_quota_check(REG_JOBS, 3, 3, &c, &err) == -1);
	CHECK(!strcmp(err.msg, "you already have 3 background jobs running, the most allowed (max_jobs = 3)"));
	CHECK_STR_CONTAINS(err.hint, "job_cancel");

	err = (struct sb_error){0};
	CHECK(reg_quota_check(REG_JOBS, 0, 4, &c, &err) == -1);
	CHECK(!strcmp(err.msg, "the server already has 4 background jobs running, the most allowed for all clients "
			       "together (max_jobs_total = 4)"));
	CHECK_STR_CONTAINS(err.hint, "--max-jobs-total N");
	CHECK(reg_quota_check(REG_JOBS, 2, 3, &c, &err) == 0);
}

static struct sess *fake_session(struct sb_registry *r, const char *owner, bool anonymous)
{
	struct sess *s = calloc(1, sizeof *s);
	pthread_mutex_init(&s->lock, NULL);
	reg_new_id(r, s->id, SB_HANDLE_SESSION);
	snprintf(s->owner, sizeof s->owner, "%s", owner);
	s->anonymous = anonymous;
	s->refs = 1; /* the list's (never the last here: nothing destroys it) */
	s->next = r->sessions;
	r->sessions = s;
	return s;
}

static struct reg_job *fake_job(struct sb_registry *r, const char *owner, struct sess *in, bool running)
{
	struct reg_job *j = calloc(1, sizeof *j);
	reg_new_id(r, j->id, SB_HANDLE_JOB);
	snprintf(j->owner, sizeof j->owner, "%s", owner);
	snprintf(j->session, sizeof j->session, "%s", in ? in->id : "");
	j->s = in;
	j->running = running;
	j->next = r->jobs;
	r->jobs = j;
	return j;
}

static void test_counts(void)
{
	struct sb_config c = cfg_with(2, 3, 1, 2);
	struct sb_registry r;
	reg_init(&r, &c);
	struct sess *a1 = fake_session(&r, "alice", false);
	fake_session(&r, "bob", false);
	struct sess *anon = fake_session(&r, "alice", true); /* a job's own: counted as the job */
	CHECK(reg_count(&r, REG_SESSIONS, "alice") == 1);
	CHECK(reg_count(&r, REG_SESSIONS, "bob") == 1);
	CHECK(reg_count(&r, REG_SESSIONS, NULL) == 2);

	struct sb_error err = {0};
	pthread_mutex_lock(&r.lock);
	CHECK(reg_room_locked(&r, REG_SESSIONS, "alice", &err) == 0);
	pthread_mutex_unlock(&r.lock);
	fake_session(&r, "alice", false);
	pthread_mutex_lock(&r.lock);
	CHECK(reg_room_locked(&r, REG_SESSIONS, "alice", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "you already have 2 open sessions");
	err = (struct sb_error){0};
	CHECK(reg_room_locked(&r, REG_SESSIONS, "carol", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "the server already has 3 open sessions");
	pthread_mutex_unlock(&r.lock);

	/* Finished jobs do not count; a running one in a session keeps it in use. */
	fake_job(&r, "alice", NULL, false);
	fake_job(&r, "alice", anon, true);
	CHECK(reg_count(&r, REG_JOBS, "alice") == 1);
	CHECK(reg_count(&r, REG_JOBS, "bob") == 0);
	pthread_mutex_lock(&r.lock);
	err = (struct sb_error){0};
	CHECK(reg_room_locked(&r, REG_JOBS, "alice", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "(max_jobs = 1)");
	CHECK(reg_room_locked(&r, REG_JOBS, "bob", &err) == 0);
	CHECK(reg_job_in_locked(&r, anon));
	CHECK(!reg_job_in_locked(&r, a1));
	pthread_mutex_unlock(&r.lock);
	struct reg_job *bj = fake_job(&r, "bob", a1, true);
	pthread_mutex_lock(&r.lock);
	CHECK(reg_job_in_locked(&r, a1));
	err = (struct sb_error){0};
	CHECK(reg_room_locked(&r, REG_JOBS, "carol", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "(max_jobs_total = 2)");
	pthread_mutex_unlock(&r.lock);
	json_t *ids = json_array();
	reg_session_jobs(&r, a1->id, ids);
	CHECK(json_array_size(ids) == 1 && !strcmp(json_string_value(json_array_get(ids, 0)), bj->id));
	json_decref(ids);

	/* Lookup: by owner and id; another owner's id is unknown, in the same words. */
	struct sess *got = NULL;
	CHECK(reg_get(&r, "alice", a1->id, &got, &err) == 0 && got == a1 && a1->refs == 2);
	err = (struct sb_error){0};
	CHECK(reg_get(&r, "bob", a1->id, &got, &err) == -1 && !got);
	CHECK_STR_CONTAINS(err.msg, "unknown session id");
	/* An anonymous session is nobody's to call. */
	err = (struct sb_error){0};
	CHECK(reg_get(&r, "alice", anon->id, &got, &err) == -1 && !got);
	/* Ids name this instance; another instance's is said to have ended
	 * with it, and the owner check stays: a handle naming this instance
	 * but another owner's is "unknown" as before. */
	char inst[SB_INSTANCE_MAX + 1];
	CHECK(reg_id_ok(a1->id, SB_HANDLE_SESSION) && sb_handle_parse(a1->id, 's', inst) &&
	      !strcmp(inst, sb_config_instance(&c)));
	CHECK(reg_id_ok(bj->id, SB_HANDLE_JOB) && !reg_id_ok(bj->id, SB_HANDLE_SESSION));
	err = (struct sb_error){0};
	CHECK(reg_get(&r, "alice", "s_elsewhere_0123456789abcdef0123456789abcdef", &got, &err) == -1 && !got);
	CHECK_STR_CONTAINS(err.msg, "session s_elsewhere_0123456789abcdef0123456789abcdef ended with its instance elsewhere");
	CHECK_STR_CONTAINS(err.hint, "session_open");

	while (r.jobs) {
		struct reg_job *j = r.jobs;
		r.jobs = j->next;
		free(j);
	}
	while (r.sessions) {
		struct sess *s = r.sessions;
		r.sessions = s->next;
		pthread_mutex_destroy(&s->lock);
		free(s);
	}
	reg_fini(&r);
}

static void test_tombstones(void)
{
	struct sb_config c = cfg_with(2, 3, 1, 2);
	struct sb_registry r;
	reg_init(&r, &c);
	char id[SB_SESSION_ID_LEN];
	CHECK(reg_new_id(&r, id, SB_HANDLE_SESSION) == 0 && reg_id_ok(id, SB_HANDLE_SESSION) && !reg_id_ok(id, SB_HANDLE_JOB));
	reg_tomb_add(&r.tombs, id, "alice", "expired after 30 min idle and was closed");
	CHECK(!strcmp(reg_tomb_find(&r.tombs, id, "alice"), "expired after 30 min idle and was closed"));
	CHECK(reg_tomb_find(&r.tombs, id, "bob") == NULL);
	CHECK(reg_tomb_find(&r.tombs, NULL, "alice") == NULL);

	struct sess *got = NULL;
	struct sb_error err = {0};
	CHECK(reg_get(&r, "alice", id, &got, &err) == -1 && !got);
	char want[200];
	snprintf(want, sizeof want, "session %s expired after 30 min idle and was closed", id);
	CHECK(!strcmp(err.msg, want));
	CHECK_STR_CONTAINS(err.hint, "session_open");
	/* Another owner's ended session: unknown, as one that never existed. */
	err = (struct sb_error){0};
	CHECK(reg_get(&r, "bob", id, &got, &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "unknown session id");

	/* The ring keeps the last SB_TOMBS: the first is forgotten after one more. */
	char last[SB_SESSION_ID_LEN];
	for (unsigned i = 0; i < SB_TOMBS; i++) {
		reg_new_id(&r, last, SB_HANDLE_SESSION);
		reg_tomb_add(&r.tombs, last, "alice", "was closed with session_close");
	}
	CHECK(reg_tomb_find(&r.tombs, id, "alice") == NULL);
	CHECK(!strcmp(reg_tomb_find(&r.tombs, last, "alice"), "was closed with session_close"));
	reg_fini(&r);
}

int main(void)
{
	test_quota_words();
	test_counts();
	test_tombstones();
	return check_summary();
}
