/* Sessions and jobs belong to the client that made them: the
 * registry (runner/sessions/registry.c) keyed by owner id, with real Python sessions
 * in native sandboxes. Another owner can neither list, use, reset nor close
 * a session, nor see, read or cancel a job, and is told exactly what a
 * never-issued id gets; the owner's own calls keep working throughout.
 * (stdio has one client; the HTTP transport gives each client its own
 * owner id, and tests its clients against each other over HTTP.) */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config/config.h"
#include "runner/backend.h"
#include "runner/jobs/jobs.h"
#include "runner/sessions/sessions.h"
#include "sandbox/sandbox.h"
#include "session_run.h"

static const struct sb_session_open_opts python_session = {.lang = SB_LANG_PYTHON};

int main(void)
{
	struct sb_config cfg;
	struct sb_error err = {0};
	sb_config_defaults(&cfg);
	CHECK(sb_config_set(&cfg, "backend", "native", "test", &err) == 0);
	struct sb_backend *be = sb_runner_backend_open(&cfg, &err);
	if (!be) {
		fprintf(stderr, "no native sandbox here: %s (%s)\n", err.msg, err.hint);
		return 1;
	}
	/* As `sagebox mcp` does (cli_mcp.c): a write to a session whose
	 * controller has just gone is an error the runner reports, not a
	 * signal that ends the process (fresh-check at 7eaff46: killed by
	 * SIGPIPE once, in 0.08 s). */
	signal(SIGPIPE, SIG_IGN);
	struct sb_sessions *ss = sb_sessions_new(&cfg, be, &sb_jobs_tenant);
	CHECK(ss != NULL);

	struct sb_session_opened a;
	CHECK(sb_session_open(ss, "alice", &python_session, &a, &err) == 0);
	char out[256];
	CHECK(run_as(ss, "alice", a.id, "secret = 42", out, sizeof out, &err) == 0);

	/* What an id nobody issued gets: the same words for another's. */
	const char *never = "s_00000000000000000000000000000000";
	struct sb_error e_never = {0}, e_other = {0};
	CHECK(run_as(ss, "bob", never, "1", out, sizeof out, &e_never) == -1);
	CHECK(run_as(ss, "bob", a.id, "print(secret)", out, sizeof out, &e_other) == -1);
	CHECK_STR_CONTAINS(e_other.msg, a.id);
	CHECK_STR_CONTAINS(e_never.msg, "unknown");
	CHECK_STR_CONTAINS(e_other.msg, "unknown");

	/* bob lists nothing, resets and closes nothing, writes, reads, lists no file */
	json_t *l = sb_session_list(ss, "bob");
	CHECK(json_array_size(json_object_get(l, "sessions")) == 0);
	json_decref(l);
	l = sb_session_list(ss, "alice");
	CHECK(json_array_size(json_object_get(l, "sessions")) == 1);
	json_decref(l);
	CHECK(sb_session_reset(ss, "bob", a.id, &err) == -1);
	CHECK(sb_session_close(ss, "bob", a.id, &err) == -1);
	json_t *reply = NULL;
	CHECK(sb_session_write(ss, "bob", a.id, "x.txt", "x", 1, false, &reply, &err) == -1 && !reply);
	CHECK(sb_session_files(ss, "bob", a.id, NULL, &reply, &err) == -1 && !reply);
	CHECK(sb_job_start(ss, "bob", SB_LANG_PYTHON, "print(secret)", 13, a.id, 60, (char[SB_SESSION_ID_LEN]){0},
			   &err) == -1);

	/* alice's job: bob can neither see, read nor cancel it */
	char jid[SB_SESSION_ID_LEN];
	CHECK(sb_job_start(ss, "alice", SB_LANG_PYTHON, "import time\nprint(secret)\ntime.sleep(30)", 39, a.id, 60, jid,
			   &err) == 0);
	CHECK(sb_job_status(ss, "bob", jid, &err) == NULL);
	CHECK_STR_CONTAINS(err.msg, jid);
	CHECK(sb_job_output(ss, "bob", jid, 0, 4096, &err) == NULL);
	CHECK(sb_job_cancel(ss, "bob", jid, &err) == -1);
	json_t *st = sb_job_status(ss, "alice", jid, &err);
	CHECK(st != NULL);
	json_decref(st);

	/* everything of alice's is untouched */
	CHECK(run_as(ss, "alice", a.id, "print(secret)", out, sizeof out, &err) == 0);
	CHECK(!strcmp(out, "42\n"));
	CHECK(sb_job_cancel(ss, "alice", jid, &err) == 0);
	CHECK(sb_session_close(ss, "alice", a.id, &err) == 0);
	sb_sessions_free(ss);
	sb_backend_close(be);
	return check_summary();
}
