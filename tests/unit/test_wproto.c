/* The frame decoder (runner/warm/wproto.c, sb_wp_job_decode): one job's frames
 * checked once for every feeder, so a warm worker and a session's
 * controller are held to the same rules. Each case is a frame as the far
 * side would send it (a JSON header, a payload), fed to a job set up as
 * the feeder sets it up (worker_job.c, sess_feed.c). */
#include <stdlib.h>

#include "check.h"
#include "runner/supervise.h"
#include "runner/warm/wproto.h"

#define WARM_DONE "\"timed_out\": false, \"cancelled\": false, \"flooded\": false"

static struct sb_wp_job warm_job(bool fresh_not_ready)
{
	return (struct sb_wp_job){
		.id = 7,
		.types = SB_WP_WORKER_TYPES & ~(fresh_not_ready ? 0u : 1u << SB_WP_READY),
		.needs_started = true,
		.done_needs = SB_WP_DONE_TIMED_OUT | SB_WP_DONE_CANCELLED | SB_WP_DONE_FLOODED,
	};
}

static struct sb_wp_job session_job(bool job)
{
	return (struct sb_wp_job){
		.id = 7,
		.types = 1u << SB_WP_OUT | 1u << SB_WP_DONE | (job ? 1u << SB_WP_STARTED | 1u << SB_WP_REPLY : 0),
		.done_needs = job ? SB_WP_DONE_KILLED : SB_WP_DONE_INTERRUPTED | SB_WP_DONE_RESTARTED,
	};
}

/* Decode one frame: 0 or -1; why says how it broke the protocol. */
static int feed(struct sb_wp_job *j, enum sb_wp_type type, const char *hdr, const char *payload,
		struct sb_wp_event *ev, char *why)
{
	static json_t *last; /* kept until the next frame: ev points into it */
	json_decref(last);
	json_error_t je;
	json_t *h = last = json_loads(hdr, 0, &je);
	if (!h) {
		fprintf(stderr, "bad test header %s: %s\n", hdr, je.text);
		abort();
	}
	struct sb_wp_frame f = {type, h, payload ? payload : "", payload ? strlen(payload) : 0};
	why[0] = '\0';
	int rc = sb_wp_job_decode(j, &f, ev, why, 128);
	return rc;
}

static void test_warm_job_in_order(void)
{
	struct sb_wp_job j = warm_job(false);
	struct sb_wp_event ev;
	char why[128];
	CHECK(feed(&j, SB_WP_STARTED, "{\"type\": \"started\", \"id\": 7}", NULL, &ev, why) == 0);
	CHECK(ev.type == SB_WP_STARTED && j.started);
	CHECK(feed(&j, SB_WP_OUT, "{\"type\": \"out\", \"id\": 7, \"stream\": \"stderr\"}", "abc", &ev, why) == 0);
	CHECK(ev.type == SB_WP_OUT && ev.stream == SB_STREAM_STDERR && ev.payload_len == 3);
	CHECK(feed(&j, SB_WP_OUT, "{\"type\": \"out\", \"id\": 7, \"stream\": \"display\"}", "F", &ev, why) == 0);
	CHECK(ev.stream == SB_STREAM_DISPLAY);
	CHECK(feed(&j, SB_WP_DONE,
		   "{\"type\": \"done\", \"id\": 7, \"exit_code\": 3, \"signal\": 0, \"timed_out\": true, "
		   "\"cancelled\": false, \"flooded\": false}",
		   NULL, &ev, why) == 0);
	CHECK(ev.type == SB_WP_DONE && ev.exit_code == 3 && ev.signal == 0 && ev.flags == SB_WP_DONE_TIMED_OUT);
	CHECK(j.done);
	/* nothing after done */
	CHECK(feed(&j, SB_WP_OUT, "{\"type\": \"out\", \"id\": 7, \"stream\": \"stdout\"}", "x", &ev, why) == -1);
	CHECK(strstr(why, "after") != NULL);
}

/* Each line: a frame the warm worker's job rejects, after the frames before
 * it in its case were taken. */
static void test_warm_job_rejects(void)
{
	static const struct {
		const char *what;
		bool start_first;
		enum sb_wp_type type;
		const char *hdr;
	} bad[] = {
		{"output before started", false, SB_WP_OUT, "{\"type\": \"out\", \"id\": 7, \"stream\": \"stdout\"}"},
		{"done before started", false, SB_WP_DONE, "{\"type\": \"done\", \"id\": 7, \"exit_code\": 0, \"signal\": 0, " WARM_DONE "}"},
		{"started twice", true, SB_WP_STARTED, "{\"type\": \"started\", \"id\": 7}"},
		{"another job", false, SB_WP_STARTED, "{\"type\": \"started\", \"id\": 8}"},
		{"no id", false, SB_WP_STARTED, "{\"type\": \"started\"}"},
		{"a string id", false, SB_WP_STARTED, "{\"type\": \"started\", \"id\": \"7\"}"},
		{"unknown stream", true, SB_WP_OUT, "{\"type\": \"out\", \"id\": 7, \"stream\": \"stdin\"}"},
		{"no stream", true, SB_WP_OUT, "{\"type\": \"out\", \"id\": 7}"},
		{"exit code as a string", true, SB_WP_DONE, "{\"type\": \"done\", \"id\": 7, \"exit_code\": \"0\", \"signal\": 0, " WARM_DONE "}"},
		{"exit code too large", true, SB_WP_DONE, "{\"type\": \"done\", \"id\": 7, \"exit_code\": 256, \"signal\": 0, " WARM_DONE "}"},
		{"signal too large", true, SB_WP_DONE, "{\"type\": \"done\", \"id\": 7, \"exit_code\": 0, \"signal\": 128, " WARM_DONE "}"},
		{"a missing flag", true, SB_WP_DONE, "{\"type\": \"done\", \"id\": 7, \"exit_code\": 0, \"signal\": 0, \"timed_out\": false, \"cancelled\": false}"},
		{"a flag not boolean", true, SB_WP_DONE, "{\"type\": \"done\", \"id\": 7, \"exit_code\": 0, \"signal\": 0, \"timed_out\": 0, \"cancelled\": false, \"flooded\": false}"},
		{"a reason not a string", true, SB_WP_DONE, "{\"type\": \"done\", \"id\": 7, \"exit_code\": 0, \"signal\": 0, " WARM_DONE ", \"reason\": 1}"},
		{"a second ready", false, SB_WP_READY, "{\"type\": \"ready\"}"},
		{"a reply", true, SB_WP_REPLY, "{\"type\": \"reply\", \"id\": 7}"},
		{"file data", true, SB_WP_DATA, "{\"type\": \"data\", \"id\": 7}"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct sb_wp_job j = warm_job(false);
		struct sb_wp_event ev;
		char why[128];
		if (bad[i].start_first)
			CHECK(feed(&j, SB_WP_STARTED, "{\"type\": \"started\", \"id\": 7}", NULL, &ev, why) == 0);
		int rc = feed(&j, bad[i].type, bad[i].hdr, NULL, &ev, why);
		if (rc != -1 || !why[0])
			fprintf(stderr, "accepted: %s\n", bad[i].what);
		CHECK(rc == -1 && why[0]);
	}
}

/* A fresh worker's ready frame: once, before started, without an id. */
static void test_fresh_ready(void)
{
	struct sb_wp_job j = warm_job(true);
	struct sb_wp_event ev;
	char why[128];
	CHECK(feed(&j, SB_WP_READY, "{\"type\": \"ready\", \"pid\": 2}", NULL, &ev, why) == 0);
	CHECK(ev.type == SB_WP_READY && json_is_object(ev.hdr));
	CHECK(feed(&j, SB_WP_READY, "{\"type\": \"ready\", \"pid\": 2}", NULL, &ev, why) == -1);
	j = warm_job(true);
	CHECK(feed(&j, SB_WP_STARTED, "{\"type\": \"started\", \"id\": 7}", NULL, &ev, why) == 0);
	CHECK(feed(&j, SB_WP_READY, "{\"type\": \"ready\", \"pid\": 2}", NULL, &ev, why) == -1);
}

/* A session's call: output at once (no started frame comes), and a done
 * frame with what the controller says of the interpreter. */
static void test_session_call(void)
{
	struct sb_wp_job j = session_job(false);
	struct sb_wp_event ev;
	char why[128];
	CHECK(feed(&j, SB_WP_OUT, "{\"type\": \"out\", \"id\": 7, \"stream\": \"stdout\"}", "1\n", &ev, why) == 0);
	CHECK(ev.stream == SB_STREAM_STDOUT && ev.payload_len == 2);
	/* what the session feeder used to drop without a word */
	CHECK(feed(&j, SB_WP_OUT, "{\"type\": \"out\", \"id\": 7, \"stream\": \"nowhere\"}", "1\n", &ev, why) == -1);
	CHECK(feed(&j, SB_WP_STARTED, "{\"type\": \"started\", \"id\": 7}", NULL, &ev, why) == -1);
	CHECK(feed(&j, SB_WP_DATA, "{\"type\": \"data\", \"id\": 7}", NULL, &ev, why) == -1);
	CHECK(feed(&j, SB_WP_REPLY, "{\"type\": \"reply\", \"id\": 7}", NULL, &ev, why) == -1);
	CHECK(feed(&j, SB_WP_DONE,
		   "{\"type\": \"done\", \"id\": 7, \"exit_code\": -1, \"signal\": 9, \"interrupted\": true}", NULL, &ev,
		   why) == -1); /* (no "restarted") */
	CHECK(feed(&j, SB_WP_DONE,
		   "{\"type\": \"done\", \"id\": 7, \"exit_code\": -1, \"signal\": 9, \"interrupted\": true, "
		   "\"restarted\": \"yes\"}",
		   NULL, &ev, why) == -1);
	CHECK(!j.done);
	CHECK(feed(&j, SB_WP_DONE,
		   "{\"type\": \"done\", \"id\": 7, \"exit_code\": -1, \"signal\": 9, \"interrupted\": true, "
		   "\"restarted\": true, \"reason\": \"gone\"}",
		   NULL, &ev, why) == 0);
	CHECK(ev.flags == (SB_WP_DONE_INTERRUPTED | SB_WP_DONE_RESTARTED) && ev.signal == 9 && ev.exit_code == -1);
	CHECK(j.done);
}

/* A session's background job: started once, a refusal as a reply. */
static void test_session_job(void)
{
	struct sb_wp_job j = session_job(true);
	struct sb_wp_event ev;
	char why[128];
	CHECK(feed(&j, SB_WP_REPLY, "{\"type\": \"reply\", \"id\": 7, \"ok\": false, \"error\": \"busy\"}", NULL, &ev,
		   why) == 0);
	CHECK(ev.type == SB_WP_REPLY && ev.error && !strcmp(ev.error, "busy"));
	CHECK(feed(&j, SB_WP_REPLY, "{\"type\": \"reply\", \"id\": 7, \"error\": 5}", NULL, &ev, why) == -1);
	CHECK(feed(&j, SB_WP_STARTED, "{\"type\": \"started\", \"id\": 7}", NULL, &ev, why) == 0);
	CHECK(feed(&j, SB_WP_STARTED, "{\"type\": \"started\", \"id\": 7}", NULL, &ev, why) == -1);
	CHECK(strstr(why, "twice") != NULL);
	CHECK(feed(&j, SB_WP_DONE, "{\"type\": \"done\", \"id\": 7, \"exit_code\": 0, \"signal\": 0}", NULL, &ev,
		   why) == -1); /* (no "killed") */
	CHECK(feed(&j, SB_WP_DONE, "{\"type\": \"done\", \"id\": 7, \"exit_code\": 0, \"signal\": 0, \"killed\": false}",
		   NULL, &ev, why) == 0);
	CHECK(ev.flags == 0 && j.done);
}

int main(void)
{
	test_warm_job_in_order();
	test_warm_job_rejects();
	test_fresh_ready();
	test_session_call();
	test_session_job();
	return check_summary();
}
