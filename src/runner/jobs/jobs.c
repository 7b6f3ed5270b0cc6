/* Background jobs: code that runs while the model does other work, and
 * survives the client's request timeout. Each job has a thread that holds
 * it to its timeout (the supervisor, with a job log as its sink: output
 * the model pages through by offset) and a random id owned by the client.
 * With a session it runs in that session's sandbox, as a fork of its
 * interpreter (it sees the session's variables; its changes do not flow
 * back) beside the session's calls; without one, in a session sandbox of
 * its own (a ready spare when there is one), closed when the job ends.
 * Jobs end with their session and with sagebox. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics/metrics.h"
#include "runner/jobs/jobs.h"
#include "runner/jobs/joblog.h"
#include "runner/sessions/sess_feed.h"
#include "runner/sessions/sess_ws.h"
#include "runner/sessions/sessreg.h"
#include "util/clock.h"
#include "util/fd.h"

/* A finished job's status and output stay this long (then it is "unknown"). */
#define KEEP_DONE_MS (60u * 60 * 1000)
/* Finished jobs kept per client at most (the oldest go first). */
#define KEEP_DONE_MAX 64
/* The logs of finished jobs kept at most, all clients together (on disk:
 * runner/jobs/joblog.h); past it the oldest finished jobs' logs are dropped. */
#define KEEP_DONE_LOG_BYTES (128ull << 20)
/* How long the controller may take to fork a job. */
#define START_TIMEOUT_MS 60000
/* job_status's last output. */
#define TAIL_BYTES 2000

enum jstate { J_QUEUED, J_RUNNING, J_DONE, J_FAILED, J_TIMED_OUT, J_CANCELLED };
static const char *const state_names[] = {"queued", "running", "done", "failed", "timed_out", "cancelled"};

/* A job: the registry's entry first (its id, owner, session, whether it
 * runs and its sandbox: registry.h), then what only jobs.c uses. */
struct bjob {
	struct reg_job reg;
	enum sb_lang lang;
	unsigned timeout_s;
	char *code;
	size_t code_len;
	struct sb_joblog log;
	int cancel[2];
	pthread_t thread;
	/* under the registry's lock */
	enum jstate state;
	int exit_code, signal;
	char error[500];
	uint64_t created_ms, started_ms, ended_ms;
	struct sb_sup *sup;                /* while the supervisor runs */
	bool thread_done;                  /* its thread touches it no more */
};

/* The jobs of the registry's list (each reg_job is a bjob's first member). */
#define FIRST(ss) ((struct bjob *)(ss)->reg.jobs)
#define NEXT(j) ((struct bjob *)(j)->reg.next)

static struct bjob *find_locked(struct sb_sessions *ss, const char *owner, const char *id)
{
	for (struct bjob *j = FIRST(ss); j && id; j = NEXT(j))
		if (!strcmp(j->reg.id, id) && !strcmp(j->reg.owner, owner))
			return j;
	return NULL;
}

static bool running(const struct bjob *j)
{
	return j->state == J_QUEUED || j->state == J_RUNNING;
}

static void set_state(struct sb_sessions *ss, struct bjob *j, enum jstate st, const char *error)
{
	pthread_mutex_lock(&ss->reg.lock);
	j->state = st;
	if (error && !j->error[0])
		snprintf(j->error, sizeof j->error, "%s", error);
	j->reg.running = running(j);
	if (!running(j))
		j->ended_ms = sb_now_ms();
	pthread_mutex_unlock(&ss->reg.lock);
}

/* Hand the job to the session's controller (the interpreter must be idle
 * for the fork) and wait until it runs. 0; 1 when job_cancel came after the
 * job's frame was sent but before the controller said it started (the
 * supervisor's cancel path then stops whatever it started: a jobkill, and
 * the session is closed when the controller does not confirm); -1 with why. */
static int start_in(struct sess *s, struct bjob *j, struct sess_feeder *x, char *why, size_t n)
{
	struct sb_error err = {0};
	int taken = sess_take(s, j->cancel[0], &err);
	if (taken) {
		snprintf(why, n, "%.400s", taken > 0 ? "cancelled before it started" : err.msg);
		return -1;
	}
	json_t *h = json_pack("{s:s, s:I, s:s, s:I}", "type", "job", "id", x->in.id, "lang", sb_lang_name(j->lang),
			      "code_bytes", (json_int_t)j->code_len);
	int rc = sess_send(s, h, j->code, j->code_len);
	uint64_t deadline = sb_now_ms() + START_TIMEOUT_MS;
	struct sess_frame *f = NULL;
	bool cancelled = false;
	while (!rc && !x->started && !cancelled) {
		if (!(f = sess_pop(s, &x->in))) {
			if (sess_dead(s, why, n) || sb_now_ms() >= deadline)
				break;
			/* The cancel fd too: a stuck controller would hold a
			 * cancel up to START_TIMEOUT_MS. */
			cancelled = sess_wait(&x->in, j->cancel[0], 200) == 1;
			continue;
		}
		struct sb_wp_event ev;
		char bad[128];
		if (sess_feeder_decode(x, f, &ev, bad, sizeof bad)) {
			snprintf(why, n, "its session's controller broke the protocol (%s)", bad);
			sess_frame_free(f);
			break;
		}
		if (ev.type == SB_WP_REPLY) {
			snprintf(why, n, "the session refused it: %.300s", ev.error ? ev.error : "?");
			sess_frame_free(f);
			break;
		}
		sess_frame_free(f); /* (output before started: no sink yet) */
	}
	sess_give(s);
	if (x->started)
		return 0;
	if (cancelled)
		return 1;
	if (!why[0] && rc && !sess_dead(s, why, n))
		snprintf(why, n, "its session could not be given the job");
	if (!why[0]) {
		/* The controller may still have the job's frame: were it to start
		 * the job later, nothing would watch or stop it. */
		snprintf(why, n, "its session did not start it within %d s, and was closed", START_TIMEOUT_MS / 1000);
		sess_kill(s, false, "it did not start a job within %d s, and was closed", START_TIMEOUT_MS / 1000);
	}
	return -1;
}

struct job_ctx {
	struct sb_sessions *ss;
	struct bjob *j;
};

static void run_job(struct sb_sessions *ss, struct bjob *j)
{
	struct sb_error err = {0};
	char why[500] = "";
	if (!j->reg.s) {
		bool spare;
		struct sess *s = reg_new_session(&ss->reg, ss->spares, j->reg.owner, j->lang, true, &spare, &err);
		if (!s) {
			set_state(ss, j, J_FAILED, err.msg);
			return;
		}
		pthread_mutex_lock(&ss->reg.lock);
		j->reg.s = s;
		pthread_mutex_unlock(&ss->reg.lock);
		sb_worker_net_serves(s->w, j->reg.owner, "job", j->reg.id);
	}
	struct sess_feeder x;
	if (sess_feeder_init(&x, j->reg.s, true)) {
		set_state(ss, j, J_FAILED, "out of memory");
		return;
	}
	int started = start_in(j->reg.s, j, &x, why, sizeof why);
	if (started < 0) {
		sess_feeder_fini(&x);
		set_state(ss, j, strstr(why, "cancelled") ? J_CANCELLED : J_FAILED, why);
		return;
	}
	bool early = started == 1; /* cancelled while starting: the cancel fd is readable */
	free(j->code);
	j->code = NULL;
	struct sb_run_hooks hooks = {.cancel_fd = j->cancel[0]};
	struct sb_sup sup;
	sb_sup_init(&sup, &x.f, &j->log.sink, (uint64_t)j->timeout_s * 1000, &hooks, NULL);
	pthread_mutex_lock(&ss->reg.lock);
	if (!early) {
		j->state = J_RUNNING;
		j->started_ms = sb_now_ms();
	}
	j->sup = &sup;
	pthread_mutex_unlock(&ss->reg.lock);
	sb_sup_run(&sup);
	/* (drained: its done came, the controller refused it, or the session is gone) */
	if (sup.killed && !x.f.ops->drained(&x.f))
		sess_kill(j->reg.s, false, "%s", early ? "it did not answer when a job it was starting was cancelled, and was closed"
						   : "it did not stop a job that had to be stopped, and was closed");
	pthread_mutex_lock(&ss->reg.lock);
	j->sup = NULL;
	j->exit_code = x.done ? x.exit_code : -1;
	j->signal = x.done ? x.signal : 0;
	pthread_mutex_unlock(&ss->reg.lock);
	bool closed = false;
	char ended[400] = "";
	if (!x.done && sess_dead(j->reg.s, ended, sizeof ended)) {
		pthread_mutex_lock(&j->reg.s->lock);
		closed = j->reg.s->closed;
		pthread_mutex_unlock(&j->reg.s->lock);
		snprintf(why, sizeof why, "its session ended before it did: %s", ended);
	}
	if (early)
		snprintf(why, sizeof why, "cancelled while its session was starting it%s%.380s",
			 ended[0] ? "; the session ended: " : "", ended);
	enum jstate st = sup.timed_out ? J_TIMED_OUT
			 : sup.cancelled || closed ? J_CANCELLED
			 : sup.flooded ? J_FAILED
			 : x.done && x.exit_code == 0 && x.signal == 0 ? J_DONE : J_FAILED;
	if (sup.timed_out)
		snprintf(why, sizeof why, "it ran longer than its timeout of %u s and was killed", j->timeout_s);
	else if (sup.flooded)
		snprintf(why, sizeof why, "it wrote more than %llu MiB to one stream and was stopped",
			 (unsigned long long)(SB_JOBLOG_FLOOD >> 20));
	else if (sup.broken[0] && !why[0])
		snprintf(why, sizeof why, "%.450s", sup.broken);
	else if (st == J_FAILED && x.done && x.exit_code < 0 && !x.signal && !why[0])
		snprintf(why, sizeof why, "it ended, but its session could not tell its exit status (in a shell session, "
					  "the session's own code can hide it by replacing __sb_job or killing the "
					  "subshell that waits for the job)");
	sess_feeder_fini(&x);
	set_state(ss, j, st, why[0] ? why : NULL);
}

static void *job_thread(void *arg)
{
	struct job_ctx *c = arg;
	struct sb_sessions *ss = c->ss;
	struct bjob *j = c->j;
	free(c);
	run_job(ss, j);
	struct sess *s = j->reg.s;
	if (s && !s->anonymous && s->ws) {
		/* what the job wrote in a named workspace is kept now, not only
		 * at the session's next call */
		json_t *rep = NULL;
		struct sb_error err = {0};
		sess_ws_sync(s, true, &rep, &err);
		json_decref(rep);
	}
	if (s && s->anonymous)
		reg_close(&ss->reg, s, "its job ended");
	if (s)
		reg_put(&ss->reg, s);
	/* Last: from here the reaper may join this thread and free the job. */
	pthread_mutex_lock(&ss->reg.lock);
	j->reg.s = NULL;
	j->thread_done = true;
	pthread_mutex_unlock(&ss->reg.lock);
	return NULL;
}

static void job_free(struct bjob *j)
{
	sb_joblog_free(&j->log);
	sb_close(&j->cancel[0]);
	sb_close(&j->cancel[1]);
	free(j->code);
	free(j);
}

int sb_job_start(struct sb_sessions *ss, const char *owner, enum sb_lang lang, const char *code, size_t code_len,
		 const char *session_id, unsigned timeout_s, char id_out[SB_SESSION_ID_LEN], struct sb_error *err)
{
	const struct sb_config *cfg = ss->cfg;
	if (!cfg->max_jobs) {
		sb_fail(err, "background jobs are turned off here (max_jobs = 0)");
		return sb_hint(err, "run the code with a run tool instead; the user can enable jobs with --max-jobs N");
	}
	struct sess *s = NULL;
	if (session_id && reg_get(&ss->reg, owner, session_id, &s, err))
		return -1;
	if (s && !sess_takes(s->lang, lang)) {
		sb_fail(err, "session %s is a %s session: it cannot run a %s job", session_id, sb_lang_name(s->lang),
			sb_lang_name(lang));
		sb_hint(err, "give the session's language as lang, or start the job without session_id");
		reg_put(&ss->reg, s);
		return -1;
	}
	struct bjob *j = calloc(1, sizeof *j);
	struct job_ctx *c = malloc(sizeof *c);
	if (!j || !c || !(j->code = malloc(code_len + 1)) || reg_new_id(&ss->reg, j->reg.id, SB_HANDLE_JOB)) {
		free(c);
		if (j)
			free(j->code);
		free(j);
		if (s)
			reg_put(&ss->reg, s);
		return sb_fail(err, "out of memory");
	}
	memcpy(j->code, code, code_len);
	j->code_len = code_len;
	snprintf(j->reg.owner, sizeof j->reg.owner, "%s", owner);
	snprintf(j->reg.session, sizeof j->reg.session, "%s", s ? s->id : "");
	j->lang = lang;
	j->timeout_s = timeout_s;
	j->reg.s = s;
	j->reg.running = true; /* queued */
	j->exit_code = -1;
	j->created_ms = sb_now_ms();
	sb_joblog_init(&j->log);
	j->cancel[0] = j->cancel[1] = -1;
	*c = (struct job_ctx){ss, j};

	/* Counted and listed under one hold of the lock: concurrent starts,
	 * of one client or of many, cannot overshoot either limit. */
	pthread_mutex_lock(&ss->reg.lock);
	int rc = -1;
	if (reg_room_locked(&ss->reg, REG_JOBS, owner, err)) {
		/* (full: err says which limit) */
	} else if (ss->reg.stopping) {
		sb_fail(err, "sagebox is shutting down");
	} else if (sb_pipe(j->cancel) || pthread_create(&j->thread, NULL, job_thread, c) != 0) {
		sb_fail(err, "cannot start the job's thread");
	} else {
		j->reg.next = ss->reg.jobs;
		ss->reg.jobs = &j->reg;
		snprintf(id_out, SB_SESSION_ID_LEN, "%s", j->reg.id);
		rc = 0;
	}
	pthread_mutex_unlock(&ss->reg.lock);
	if (rc) {
		free(c);
		j->reg.s = NULL;
		job_free(j);
		if (s)
			reg_put(&ss->reg, s);
	}
	return rc;
}

static int unknown_job(const struct sb_sessions *ss, const char *id, struct sb_error *err)
{
	if (reg_elsewhere(&ss->reg, id, err))
		return -1;
	sb_fail(err, "unknown job id '%.80s': no job of yours has it", id ? id : "");
	return sb_hint(err, "use an id that job_start returned; a finished job is kept for an hour, and jobs do "
			    "not survive a restart of sagebox");
}

static uint64_t runtime_ms(const struct bjob *j)
{
	if (!j->started_ms)
		return 0;
	return (running(j) ? sb_now_ms() : j->ended_ms) - j->started_ms;
}

json_t *sb_job_status(struct sb_sessions *ss, const char *owner, const char *id, struct sb_error *err)
{
	pthread_mutex_lock(&ss->reg.lock);
	struct bjob *j = find_locked(ss, owner, id);
	json_t *o = NULL;
	if (j) {
		o = json_pack("{s:s, s:s, s:s, s:I, s:I}", "job_id", j->reg.id, "state", state_names[j->state], "lang",
			      sb_lang_name(j->lang), "runtime_ms", (json_int_t)runtime_ms(j), "timeout_seconds",
			      (json_int_t)j->timeout_s);
		json_object_set_new(o, "session_id", j->reg.session[0] ? json_string(j->reg.session) : json_null());
		json_object_set_new(o, "exit_code", running(j) || j->exit_code < 0 ? json_null() : json_integer(j->exit_code));
		json_object_set_new(o, "signal", j->signal ? json_integer(j->signal) : json_null());
		json_object_set_new(o, "output_bytes", json_integer((json_int_t)sb_joblog_bytes(&j->log)));
		/* Output no longer kept: the oldest past the last 8 MiB, or all
		 * of a finished job's once the server's total was reached. */
		json_object_set_new(o, "output_dropped_bytes", json_integer((json_int_t)sb_joblog_gone(&j->log)));
		if (sb_joblog_was_dropped(&j->log))
			json_object_set_new(o, "output_note", json_sprintf("its output was dropped: finished jobs' logs are "
				"kept up to %llu MiB for all clients together, and newer jobs' needed the room",
				(unsigned long long)(KEEP_DONE_LOG_BYTES >> 20)));
		else if (sb_joblog_gone(&j->log))
			json_object_set_new(o, "output_note", json_sprintf("only its last %u MiB of output are kept",
				SB_JOBLOG_KEEP >> 20));
		if (j->error[0])
			json_object_set_new(o, "error", json_string(j->error));
		size_t n = 0;
		char *tail = sb_joblog_tail(&j->log, TAIL_BYTES, &n);
		json_object_set_new(o, "last_output", json_stringn(tail ? tail : "", tail ? n : 0));
		free(tail);
	}
	pthread_mutex_unlock(&ss->reg.lock);
	if (!o)
		unknown_job(ss, id, err);
	return o;
}

json_t *sb_job_output(struct sb_sessions *ss, const char *owner, const char *id, uint64_t offset, size_t max,
		      struct sb_error *err)
{
	pthread_mutex_lock(&ss->reg.lock);
	struct bjob *j = find_locked(ss, owner, id);
	json_t *o = NULL;
	if (j) {
		size_t n = 0;
		uint64_t next, dropped, end;
		char *page = sb_joblog_page(&j->log, offset, max, &n, &next, &dropped, &end);
		o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:s%}", "job_id", j->reg.id, "state", state_names[j->state],
			      "offset", (json_int_t)offset, "next_offset", (json_int_t)next, "end_offset", (json_int_t)end,
			      "dropped_bytes", (json_int_t)dropped, "output", page ? page : "", page ? n : 0);
		free(page);
	}
	pthread_mutex_unlock(&ss->reg.lock);
	if (!o)
		unknown_job(ss, id, err);
	return o;
}

int sb_job_cancel(struct sb_sessions *ss, const char *owner, const char *id, struct sb_error *err)
{
	pthread_mutex_lock(&ss->reg.lock);
	struct bjob *j = find_locked(ss, owner, id);
	if (j && running(j)) {
		char b = 'c';
		(void)SB_RETRY_EINTR(write(j->cancel[1], &b, 1));
	}
	pthread_mutex_unlock(&ss->reg.lock);
	return j ? 0 : unknown_job(ss, id, err);
}

/* Under the lock: drop the logs of the oldest finished jobs (of any
 * client) until those of all finished jobs fit KEEP_DONE_LOG_BYTES. */
static void jobs_cap_logs_locked(struct sb_sessions *ss)
{
	for (;;) {
		uint64_t kept = 0;
		struct bjob *oldest = NULL;
		for (struct bjob *j = FIRST(ss); j; j = NEXT(j)) {
			if (running(j) || !j->thread_done)
				continue;
			uint64_t n = sb_joblog_kept(&j->log);
			kept += n;
			if (n && (!oldest || j->ended_ms < oldest->ended_ms))
				oldest = j;
		}
		if (kept <= KEEP_DONE_LOG_BYTES || !oldest)
			return;
		sb_joblog_drop(&oldest->log);
	}
}

/* Under the lock: forget finished jobs past their time, or past the most
 * kept per client, and keep their logs' total (jobs_cap_logs_locked). Their threads have ended (a finished job's thread only
 * drops its references after its state is final; join is quick). */
static void jobs_prune_locked(void *ctx, uint64_t now)
{
	struct sb_sessions *ss = ctx;
	for (struct reg_job **pp = &ss->reg.jobs; *pp;) {
		struct bjob *j = (struct bjob *)*pp;
		unsigned newer = 0;
		for (struct bjob *o = FIRST(ss); o != j; o = NEXT(o))
			newer += !running(o) && !strcmp(o->reg.owner, j->reg.owner);
		if (!running(j) && j->thread_done && (now - j->ended_ms >= KEEP_DONE_MS || newer >= KEEP_DONE_MAX)) {
			*pp = j->reg.next;
			pthread_join(j->thread, NULL);
			job_free(j);
		} else {
			pp = &j->reg.next;
		}
	}
	jobs_cap_logs_locked(ss);
}

static void jobs_cancel_owner(struct sb_sessions *ss, const char *owner)
{
	pthread_mutex_lock(&ss->reg.lock);
	for (struct bjob *j = FIRST(ss); j; j = NEXT(j))
		if (running(j) && !strcmp(j->reg.owner, owner)) {
			char b = 'c';
			(void)SB_RETRY_EINTR(write(j->cancel[1], &b, 1));
		}
	pthread_mutex_unlock(&ss->reg.lock);
}

static void jobs_stop_all(struct sb_sessions *ss)
{
	pthread_mutex_lock(&ss->reg.lock);
	struct bjob *all = FIRST(ss);
	ss->reg.jobs = NULL;
	for (struct bjob *j = all; j; j = NEXT(j)) {
		char b = 'c';
		(void)SB_RETRY_EINTR(write(j->cancel[1], &b, 1));
	}
	pthread_mutex_unlock(&ss->reg.lock);
	/* (their sessions were killed already: each thread ends quickly) */
	while (all) {
		struct bjob *j = all;
		all = NEXT(j);
		pthread_join(j->thread, NULL);
		job_free(j);
	}
}

void sb_jobs_metrics(struct sb_sessions *ss, bool by_client)
{
	sb_metric_clear(SB_M_JOBS_RUNNING);
	for (int l = 0; l < 3; l++)
		if (!by_client)
			sb_metric_set(SB_M_JOBS_RUNNING, 0, (const char *[]){sb_lang_name((enum sb_lang)l), "all"});
	pthread_mutex_lock(&ss->reg.lock);
	for (struct bjob *j = FIRST(ss); j; j = NEXT(j))
		if (running(j))
			sb_metric_add(SB_M_JOBS_RUNNING, 1,
				      (const char *[]){sb_lang_name(j->lang), by_client ? j->reg.owner : "all"});
	pthread_mutex_unlock(&ss->reg.lock);
}

const struct sb_sessions_tenant sb_jobs_tenant = {
	.prune_locked = jobs_prune_locked,
	.end_owner = jobs_cancel_owner,
	.stop_all = jobs_stop_all,
};
