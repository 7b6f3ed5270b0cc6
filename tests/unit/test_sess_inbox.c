/* A session's inboxes (runner/sessions/sess.c): the pump's frames wait in the inbox
 * of their id, and its eventfd is readable exactly while some wait. The
 * case that broke: a job's started frame and its first output arrive
 * together; the job's start (jobs.c) waits, takes the started frame, and
 * hands the inbox to the supervisor, which must still see the output
 * (it was left unseen until the job ended: tests/sessions/jobs.test.js
 * test 3's "0 bytes of output"). No sandbox: the session is a bare struct
 * whose channel to the controller is a pipe the test holds. */
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "runner/capture.h"
#include "runner/sessions/sess.h"
#include "runner/sessions/sess_feed.h"
#include "runner/supervise.h"
#include "util/fd.h"

static struct sess *bare_session(int channel_fd)
{
	struct sess *s = calloc(1, sizeof *s);
	s->w = calloc(1, sizeof *s->w);
	s->w->sb.stdin_fd = channel_fd; /* (a job's kill is written here) */
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->changed, NULL);
	pthread_mutex_init(&s->tx, NULL);
	return s;
}

static void free_session(struct sess *s)
{
	pthread_mutex_destroy(&s->tx);
	pthread_cond_destroy(&s->changed);
	pthread_mutex_destroy(&s->lock);
	free(s->w);
	free(s);
}

/* What the pump does with one frame from the controller. */
static void from_controller_on(struct sess *s, enum sb_wp_type type, json_int_t id, const char *stream,
			       const char *payload)
{
	json_t *h = json_pack("{s:I, s:s}", "id", id, "stream", stream);
	struct sb_wp_frame f = {type, h, payload, strlen(payload)};
	sess_deliver(s, &f);
	json_decref(h);
}

static void from_controller(struct sess *s, enum sb_wp_type type, json_int_t id, const char *payload)
{
	from_controller_on(s, type, id, "stdout", payload);
}

static bool readable(int fd)
{
	struct pollfd p = {fd, POLLIN, 0};
	return poll(&p, 1, 0) == 1;
}

static const struct sb_sup_policy quick = {
	.exit_grace_ms = 100,
	.kill_grace_ms = 100,
	.soft_stop_grace_ms = 100,
	.self_timed_grace_ms = 100,
	.progress_interval_ms = 10000,
	.progress_tail_bytes = 16,
	.flood_factor = 8,
};

/* started and the first output together: the output reaches the supervisor
 * with no further frame from the controller. */
static void test_output_that_came_with_started(void)
{
	int ch[2];
	CHECK(pipe(ch) == 0);
	struct sess *s = bare_session(ch[1]);
	struct sess_feeder x;
	CHECK(sess_feeder_init(&x, s, true) == 0);
	CHECK(!readable(x.in.efd));
	from_controller(s, SB_WP_STARTED, x.in.id, "");
	from_controller(s, SB_WP_OUT, x.in.id, "started\n");
	CHECK(readable(x.in.efd));

	/* the job's start (jobs.c start_in): wait, take frames until started */
	CHECK(sess_wait(&x.in, -1, 1000) == 0);
	struct sess_frame *f = sess_pop(s, &x.in);
	CHECK(f && f->type == SB_WP_STARTED);
	sess_frame_free(f);
	CHECK(readable(x.in.efd)); /* the output still waits */

	/* the supervisor, 300 ms (then the job is killed: a jobkill frame) */
	struct sb_capture_sink cap;
	CHECK(sb_capture_sink_init(&cap, 1 << 16, NULL) == 0);
	struct sb_sup sup;
	sb_sup_init(&sup, &x.f, &cap.sink, 300, NULL, &quick);
	sb_sup_run(&sup);
	CHECK(sup.timed_out);
	struct sb_result res;
	sb_result_init(&res);
	sb_capture_sink_finish(&cap, &res);
	CHECK(res.out.data && !strcmp(res.out.data, "started\n"));
	sb_result_free(&res);
	CHECK(!readable(x.in.efd)); /* nothing waits: no busy wake-ups */

	char sent[256];
	ssize_t n = read(ch[0], sent, sizeof sent - 1);
	CHECK(n > 0);
	sent[n > 0 ? n : 0] = '\0';
	CHECK(n > 4 && strstr(sent + 4, "\"jobkill\""));
	sess_feeder_fini(&x);
	sb_close(&ch[0]);
	sb_close(&ch[1]);
	free_session(s);
}

/* Readable while frames wait, whoever waits how; clear once all are taken;
 * an ended session stays readable (its waiters must look). */
static void test_readable_while_frames_wait(void)
{
	struct sess *s = bare_session(-1);
	struct sess_inbox in, other;
	CHECK(sess_route(s, &in) == 0 && sess_route(s, &other) == 0);
	for (int i = 0; i < 3; i++)
		from_controller(s, SB_WP_OUT, in.id, "x");
	from_controller(s, SB_WP_OUT, in.id + 100, "for nobody"); /* dropped */
	CHECK(!readable(other.efd));
	for (int i = 0; i < 3; i++) {
		CHECK(readable(in.efd));
		CHECK(sess_wait(&in, -1, 0) == 0);
		struct sess_frame *f = sess_pop(s, &in);
		CHECK(f != NULL);
		sess_frame_free(f);
	}
	CHECK(!readable(in.efd));
	CHECK(sess_pop(s, &in) == NULL);
	CHECK(!readable(in.efd));

	from_controller(s, SB_WP_OUT, in.id, "y");
	sess_kill(s, false, "test"); /* (no sandbox to kill: w->spawned is false) */
	sess_frame_free(sess_pop(s, &in));
	CHECK(readable(in.efd) && readable(other.efd));
	CHECK(sess_dead(s, NULL, 0));
	sess_unroute(s, &in);
	sess_unroute(s, &other);
	free_session(s);
}

/* A controller that breaks the protocol during a call (output on a stream
 * that does not exist, which the call's feeder once dropped without a
 * word) ends its session at once, as a warm worker's sandbox is killed:
 * the controller runs beside the session's untrusted code. */
static void test_a_call_rejects_what_a_worker_would(void)
{
	static const struct {
		enum sb_wp_type type;
		const char *stream;
	} bad[] = {{SB_WP_OUT, "nowhere"}, {SB_WP_STARTED, "stdout"}, {SB_WP_DATA, "stdout"}};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int ch[2];
		CHECK(pipe(ch) == 0);
		struct sess *s = bare_session(ch[1]);
		snprintf(s->id, sizeof s->id, "s_test");
		struct sess_feeder x;
		CHECK(sess_feeder_init(&x, s, false) == 0);
		from_controller(s, SB_WP_OUT, x.in.id, "fine\n");
		from_controller_on(s, bad[i].type, x.in.id, bad[i].stream, "x");
		struct sb_capture_sink cap;
		CHECK(sb_capture_sink_init(&cap, 1 << 16, NULL) == 0);
		struct sb_sup sup;
		sb_sup_init(&sup, &x.f, &cap.sink, 5000, NULL, &quick);
		sb_sup_run(&sup);
		CHECK(!sup.timed_out && !x.done);
		CHECK(strstr(sup.broken, "broke the protocol") != NULL);
		char why[400];
		CHECK(sess_dead(s, why, sizeof why) && strstr(why, "broke the protocol"));
		struct sb_result res;
		sb_result_init(&res);
		sb_capture_sink_finish(&cap, &res);
		CHECK(res.out.data && !strcmp(res.out.data, "fine\n"));
		sb_result_free(&res);
		sess_feeder_fini(&x);
		sb_close(&ch[0]);
		sb_close(&ch[1]);
		free_session(s);
	}
}

int main(void)
{
	test_a_call_rejects_what_a_worker_would();
	test_output_that_came_with_started();
	test_readable_while_frames_wait();
	return check_summary();
}
