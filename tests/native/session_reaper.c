/* The idle reaper (runner/sessions/reaper.c) with real Python sessions in native
 * sandboxes: a session whose last use is newer than the reaper's clock
 * reading is in use, never "idle for 30 min"; one really unused for longer
 * than session_idle_minutes is closed and its id says why.
 *
 * A call stores its start (sess->used_ms) without the registry's lock, so
 * it can land after the reaper read the clock and before it compared: the
 * difference wrapped, and a session in use was closed as expired (seen in
 * stress runs of tests/sessions/jobs.test.js: a session opened
 * 120 ms before). Here the store that lands late is made on purpose. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config/config.h"
#include "runner/backend.h"
#include "runner/jobs/jobs.h"
#include "runner/sessions/sess.h"
#include "runner/sessions/sessions.h"
#include "runner/sessions/sessreg.h"
#include "sandbox/sandbox.h"
#include "session_run.h"
#include "util/clock.h"

/* Set the last use of session id to now + delta_ms. */
static void used_at(struct sb_sessions *ss, const char *id, int64_t delta_ms)
{
	struct sess *s = NULL;
	struct sb_error err = {0};
	CHECK(reg_get(&ss->reg, "alice", id, &s, &err) == 0);
	if (!s)
		return;
	atomic_store(&s->used_ms, (uint64_t)((int64_t)sb_now_ms() + delta_ms));
	reg_put(&ss->reg, s);
}

static const struct sb_session_open_opts python_session = {.lang = SB_LANG_PYTHON};

int main(void)
{
	struct sb_config cfg;
	struct sb_error err = {0};
	sb_config_defaults(&cfg);
	CHECK(sb_config_set(&cfg, "backend", "native", "test", &err) == 0);
	CHECK(sb_config_set(&cfg, "session_idle_minutes", "30", "test", &err) == 0);
	struct sb_backend *be = sb_runner_backend_open(&cfg, &err);
	if (!be) {
		fprintf(stderr, "no native sandbox here: %s (%s)\n", err.msg, err.hint);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN); /* as `sagebox mcp` does (session_owners.c) */
	struct sb_sessions *ss = sb_sessions_new(&cfg, be, &sb_jobs_tenant);
	CHECK(ss != NULL);
	if (!ss)
		return check_summary();

	struct sb_session_opened used, unused;
	CHECK(sb_session_open(ss, "alice", &python_session, &used, &err) == 0);
	CHECK(sb_session_open(ss, "alice", &python_session, &unused, &err) == 0);
	char out[256];
	CHECK(run_as(ss, "alice", used.id, "kept = 7", out, sizeof out, &err) == 0);

	/* A start stored after the reaper's clock reading (5 s after, to hold
	 * over several of its passes, one a second); and a session last used
	 * 31 min ago. */
	used_at(ss, used.id, 5000);
	used_at(ss, unused.id, -31 * 60 * 1000);
	sleep(3);

	CHECK(run_as(ss, "alice", used.id, "print(kept)", out, sizeof out, &err) == 0);
	CHECK(!strcmp(out, "7\n"));
	if (strcmp(out, "7\n"))
		fprintf(stderr, "the session in use: %s (%s)\n", err.msg, err.hint);
	struct sb_error gone = {0};
	CHECK(run_as(ss, "alice", unused.id, "1", out, sizeof out, &gone) == -1);
	CHECK_STR_CONTAINS(gone.msg, "expired after 30 min idle and was closed");

	/* session_list's idle time of a start newer than its clock: 0, not
	 * 584 million years */
	used_at(ss, used.id, 5000);
	json_t *l = sb_session_list(ss, "alice");
	json_t *arr = json_object_get(l, "sessions");
	CHECK(json_array_size(arr) == 1);
	json_t *idle = json_object_get(json_array_get(arr, 0), "idle_s");
	CHECK(json_is_integer(idle) && json_integer_value(idle) == 0);
	json_decref(l);

	CHECK(sb_session_close(ss, "alice", used.id, &err) == 0);
	sb_sessions_free(ss);
	sb_backend_close(be);
	return check_summary();
}
