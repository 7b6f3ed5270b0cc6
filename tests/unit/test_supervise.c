/* The job supervisor's decisions, driven by a test feeder over a real pipe
 * (the test plays the job's process): finish, deadline, soft then hard stop,
 * the self-timed backstop, flood, cancel, exit and kill graces, progress,
 * status read from another thread, and the verdict. Graces are shortened
 * through the policy argument; timings are checked loosely. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "runner/capture.h"
#include "runner/pipes.h"
#include "runner/supervise.h"
#include "util/clock.h"
#include "util/fd.h"

static const struct sb_sup_policy fast = {
	.exit_grace_ms = 100,
	.kill_grace_ms = 300,
	.soft_stop_grace_ms = 200,
	.self_timed_grace_ms = 250,
	.progress_interval_ms = 2000,
	.progress_tail_bytes = 16,
	.flood_factor = 8,
};

struct tfeed {
	struct sb_feeder f;
	int rd, wr;        /* the job's stdout: the supervisor reads rd, the test writes wr */
	int soft, kills;   /* calls of soft_stop and hard_kill */
	bool honour_soft;  /* a soft stop ends the job at once (an interrupt that works) */
	bool kill_closes;  /* a hard kill closes the pipe (the sandbox dies) */
	bool exit_at_eof;  /* EOF on stdout is the process's exit too */
};

static int t_fds(struct sb_feeder *f, struct sb_sup *s, struct pollfd *p)
{
	(void)s;
	p[0] = (struct pollfd){((struct tfeed *)f)->rd, POLLIN, 0};
	return 1;
}

static int t_out(void *ctx, const char *p, size_t n)
{
	sb_sup_output(ctx, SB_STREAM_STDOUT, p, n);
	return 0;
}

static void t_ready(struct sb_feeder *f, struct sb_sup *s, const struct pollfd *p, int n)
{
	struct tfeed *t = (struct tfeed *)f;
	CHECK(n == 1);
	if (p[0].revents && sb_pipe_drain(&t->rd, 16, t_out, s) == 1 && t->exit_at_eof) {
		sb_sup_exited(s);
		sb_sup_finish(s);
	}
}

static void t_soft(struct sb_feeder *f, struct sb_sup *s)
{
	struct tfeed *t = (struct tfeed *)f;
	t->soft++;
	if (t->honour_soft)
		sb_sup_finish(s);
}

static void t_kill(struct sb_feeder *f)
{
	struct tfeed *t = (struct tfeed *)f;
	t->kills++;
	if (t->kill_closes) {
		sb_close(&t->rd);
		sb_close(&t->wr);
	}
}

static bool t_drained(const struct sb_feeder *f)
{
	return ((const struct tfeed *)f)->rd < 0;
}

static const struct sb_feeder_ops soft_ops = {t_fds, t_ready, t_soft, t_kill, t_drained};
static const struct sb_feeder_ops hard_ops = {t_fds, t_ready, NULL, t_kill, t_drained};

static void tfeed_init(struct tfeed *t, const struct sb_feeder_ops *ops, bool self_timed)
{
	*t = (struct tfeed){.f = {.ops = ops, .self_timed = self_timed}, .kill_closes = true, .exit_at_eof = true};
	int p[2];
	if (sb_pipe(p))
		abort();
	t->rd = p[0];
	t->wr = p[1];
	sb_set_nonblock(t->rd, 1);
}

static void tfeed_free(struct tfeed *t)
{
	sb_close(&t->rd);
	sb_close(&t->wr);
}

/* One job: the feeder, a capture sink of cap bytes a stream, a timeout. */
struct job {
	struct tfeed t;
	struct sb_capture_sink cs;
	struct sb_sup s;
	struct sb_result res;
	uint64_t took;
};

static void job_start(struct job *j, const struct sb_feeder_ops *ops, bool self_timed, size_t cap,
		      uint64_t timeout_ms, const struct sb_run_hooks *hooks)
{
	tfeed_init(&j->t, ops, self_timed);
	sb_result_init(&j->res);
	if (sb_capture_sink_init(&j->cs, cap, NULL))
		abort();
	sb_sup_init(&j->s, &j->t.f, &j->cs.sink, timeout_ms, hooks, &fast);
}

static void job_run(struct job *j)
{
	sb_sup_run(&j->s);
	j->took = sb_now_ms() - j->s.start;
	sb_sup_verdict(&j->s, &j->res);
	sb_capture_sink_finish(&j->cs, &j->res);
}

static void job_free(struct job *j)
{
	tfeed_free(&j->t);
	sb_result_free(&j->res);
}

static void put(int fd, const char *s)
{
	if (sb_write_all(fd, s, strlen(s)))
		abort();
}

static void test_finish(void)
{
	struct job j;
	job_start(&j, &hard_ops, false, 1024, 5000, NULL);
	put(j.t.wr, "hello\n");
	sb_close(&j.t.wr);
	job_run(&j);
	CHECK(j.s.finished && !j.s.killed && !j.s.timed_out && j.t.kills == 0);
	CHECK(j.res.out.len == 6 && !strcmp(j.res.out.data, "hello\n") && j.res.out.total_bytes == 6);
	CHECK(!j.res.internal_error && !j.res.timed_out);
	job_free(&j);
}

static void test_timeout_hard(void)
{
	struct job j;
	job_start(&j, &hard_ops, false, 1024, 150, NULL);
	job_run(&j);
	CHECK(j.s.timed_out && j.s.killed && j.t.kills == 1 && j.res.timed_out);
	CHECK(j.took >= 150 && j.took < 1500);
	job_free(&j);
}

static void test_soft_stop_honoured(void)
{
	struct job j;
	job_start(&j, &soft_ops, false, 1024, 100, NULL);
	j.t.honour_soft = true;
	job_run(&j);
	/* The interrupt worked: a timeout verdict, and nothing was killed
	 * (a session keeps its state). */
	CHECK(j.t.soft == 1 && j.t.kills == 0 && !j.s.killed && j.res.timed_out);
	job_free(&j);
}

static void test_soft_stop_ignored(void)
{
	struct job j;
	job_start(&j, &soft_ops, false, 1024, 100, NULL);
	job_run(&j);
	/* Ignored: the hard kill follows after the soft-stop grace. */
	CHECK(j.t.soft == 1 && j.t.kills == 1 && j.s.killed && j.res.timed_out);
	CHECK(j.s.killed_at >= j.s.soft_at + fast.soft_stop_grace_ms);
	CHECK(j.took >= 300 && j.took < 2000);
	job_free(&j);
}

static void test_self_timed_backstop(void)
{
	struct job j;
	job_start(&j, &soft_ops, true, 1024, 100, NULL);
	job_run(&j);
	/* The far side should have stopped it: the late backstop is hard. */
	CHECK(j.t.soft == 0 && j.t.kills == 1 && j.res.timed_out);
	CHECK(j.took >= 100 + fast.self_timed_grace_ms && j.took < 2000);
	job_free(&j);
}

static void test_flood(void)
{
	struct job j;
	job_start(&j, &hard_ops, false, 64, 5000, NULL);
	CHECK(j.cs.sink.flood_bytes == 64 * 8);
	char big[4096];
	memset(big, 'x', sizeof big);
	if (sb_write_all(j.t.wr, big, sizeof big))
		abort();
	job_run(&j);
	CHECK(j.s.flooded && j.s.killed && j.res.output_limit_exceeded && !j.res.timed_out);
	CHECK(j.res.out.truncated && j.res.out.len < 200);
	job_free(&j);
}

static void test_cancel(void)
{
	int c[2];
	CHECK(sb_pipe(c) == 0);
	struct sb_run_hooks h = {.cancel_fd = c[0]};
	struct job j;
	job_start(&j, &soft_ops, true, 1024, 5000, &h);
	j.t.honour_soft = true;
	put(c[1], "x");
	job_run(&j);
	CHECK(j.s.cancelled && j.t.soft == 1 && j.t.kills == 0 && j.res.cancelled && !j.res.timed_out);
	CHECK(j.took < 1000);
	job_free(&j);
	sb_close(&c[0]);
	sb_close(&c[1]);
}

static void test_exit_grace_and_kill_grace(void)
{
	struct job j;
	/* The process exited but something holds its output open, and even
	 * the kill does not close it: exit grace, kill, kill grace, done. */
	job_start(&j, &hard_ops, false, 1024, 5000, NULL);
	j.t.kill_closes = false;
	sb_sup_exited(&j.s);
	job_run(&j);
	CHECK(j.s.killed && !j.s.timed_out && j.t.kills == 1 && !j.res.timed_out && !j.res.internal_error);
	CHECK(j.took >= fast.exit_grace_ms + fast.kill_grace_ms && j.took < 3000);
	job_free(&j);
}

static int progress_calls;
static char progress_tail[64];

static void on_progress(void *ctx, const struct sb_progress *p)
{
	(void)ctx;
	progress_calls++;
	snprintf(progress_tail, sizeof progress_tail, "%.*s", (int)p->stdout_tail_len, p->stdout_tail);
	CHECK(p->stdout_bytes == 22);
}

static void test_progress(void)
{
	struct sb_run_hooks h = {.progress = on_progress, .progress_interval_ms = 40, .cancel_fd = -1};
	struct job j;
	job_start(&j, &hard_ops, false, 1024, 300, &h);
	put(j.t.wr, "0123456789abcdefghijk\n");
	job_run(&j);
	CHECK(progress_calls >= 3);
	CHECK(!strcmp(progress_tail, "6789abcdefghijk\n")); /* the last progress_tail_bytes */
	job_free(&j);
}

static void test_broken(void)
{
	struct job j;
	job_start(&j, &hard_ops, false, 1024, 5000, NULL);
	sb_sup_broken(&j.s, "the far side %s", "lied");
	sb_sup_broken(&j.s, "a second reason is not kept");
	job_run(&j);
	CHECK(j.t.kills == 1 && j.res.internal_error && !strcmp(j.res.internal_error, "the far side lied"));
	job_free(&j);

	/* Broken after a timeout: the verdict stands, no sandbox error. */
	job_start(&j, &soft_ops, false, 1024, 50, NULL);
	j.t.kill_closes = false;
	sb_sup_run(&j.s);
	sb_sup_broken(&j.s, "late");
	sb_sup_verdict(&j.s, &j.res);
	CHECK(j.res.timed_out && !j.res.internal_error);
	sb_capture_sink_finish(&j.cs, &j.res);
	job_free(&j);
}

static void *run_thread(void *arg)
{
	sb_sup_run(arg);
	return NULL;
}

/* What a job registry does: learn of the supervisor through the watch
 * hook, read its status under the same lock from another thread. */
static pthread_mutex_t watch_mu = PTHREAD_MUTEX_INITIALIZER;
static const struct sb_sup *watched;
static int watch_calls;

static void on_watch(void *ctx, const struct sb_sup *s)
{
	(void)ctx;
	pthread_mutex_lock(&watch_mu);
	watched = s;
	watch_calls++;
	pthread_mutex_unlock(&watch_mu);
}

static bool read_status(struct sb_sup_status *st)
{
	pthread_mutex_lock(&watch_mu);
	bool live = watched != NULL;
	if (live)
		sb_sup_status(watched, st);
	pthread_mutex_unlock(&watch_mu);
	return live;
}

static void test_status_from_another_thread(void)
{
	struct job j;
	struct sb_sup_status st = {0};
	struct sb_run_hooks h = {.cancel_fd = -1, .watch = on_watch};
	job_start(&j, &hard_ops, false, 1024, 10000, &h);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, run_thread, &j.s) == 0);
	put(j.t.wr, "abc");
	for (int i = 0; i < 400; i++) {
		if (read_status(&st) && st.stdout_bytes == 3)
			break;
		usleep(5000);
	}
	CHECK(st.running && st.stdout_bytes == 3 && !st.killed && !st.timed_out);
	sb_close(&j.t.wr);
	pthread_join(th, NULL);
	CHECK(!read_status(&st) && watch_calls == 2);
	sb_sup_status(&j.s, &st);
	CHECK(!st.running && st.stdout_bytes == 3 && st.elapsed_ms < 5000);
	sb_sup_verdict(&j.s, &j.res);
	sb_capture_sink_finish(&j.cs, &j.res);
	job_free(&j);
}

int main(void)
{
	test_finish();
	test_timeout_hard();
	test_soft_stop_honoured();
	test_soft_stop_ignored();
	test_self_timed_backstop();
	test_flood();
	test_cancel();
	test_exit_grace_and_kill_grace();
	test_progress();
	test_broken();
	test_status_from_another_thread();
	return check_summary();
}
