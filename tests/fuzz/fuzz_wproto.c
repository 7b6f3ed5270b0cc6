/* Fuzz target: the host's reader of worker frames (runner/warm/wproto.c). The
 * worker runs inside the sandbox next to the model's code, so its bytes are
 * untrusted.
 *
 * Input: byte 0 picks the size of the reads (the bytes arrive in pieces of
 * that size, as a pipe may deliver them), the rest is what the worker
 * wrote. Checked: a frame returned is one of the known types with an
 * object header, its payload lies inside the bytes received and only out
 * frames carry one, and the frame encoded again by sb_wp_encode reads back
 * as the same frame. Byte 0's top bit also makes the reader a session's
 * (data and reply frames too).
 *
 * Every frame is then decoded (sb_wp_job_decode) for the three kinds of job
 * a feeder holds: a fresh worker's (ready, then started, output, done), a
 * session's call and a session's background job. Checked: an accepted
 * frame is an event of its own type; output names a known stream and is
 * the frame's payload; done has an exit code in -1..255 and a signal in
 * 0..127, carries the flags the job needs, and nothing is accepted after
 * it; a warm job's output and done come only after started, and started
 * only once; a rejection says why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runner/supervise.h"
#include "runner/warm/wproto.h"

enum { J_FRESH, J_CALL, J_JOB, J_N };

static struct sb_wp_job job_of(int kind)
{
	struct sb_wp_job j = {.id = 1};
	if (kind == J_FRESH) {
		j.types = SB_WP_WORKER_TYPES;
		j.needs_started = true;
		j.done_needs = SB_WP_DONE_TIMED_OUT | SB_WP_DONE_CANCELLED | SB_WP_DONE_FLOODED;
	} else {
		j.types = 1u << SB_WP_OUT | 1u << SB_WP_DONE | (kind == J_JOB ? 1u << SB_WP_STARTED | 1u << SB_WP_REPLY : 0);
		j.done_needs = kind == J_JOB ? SB_WP_DONE_KILLED : SB_WP_DONE_INTERRUPTED | SB_WP_DONE_RESTARTED;
	}
	return j;
}

static void decode(struct sb_wp_job *j, const struct sb_wp_frame *f)
{
	struct sb_wp_job before = *j;
	struct sb_wp_event ev;
	char why[128] = "";
	if (sb_wp_job_decode(j, f, &ev, why, sizeof why) < 0) {
		if (!why[0] || strlen(why) >= sizeof why)
			abort();
		return;
	}
	if (before.done || ev.type != f->type || !(before.types & 1u << f->type))
		abort();
	if (ev.type == SB_WP_OUT && (ev.stream < 0 || ev.stream >= SB_STREAMS || ev.payload != f->payload ||
				     ev.payload_len != f->payload_len || (before.needs_started && !before.started)))
		abort();
	if (ev.type == SB_WP_DONE && (ev.exit_code < -1 || ev.exit_code > 255 || ev.signal < 0 || ev.signal > 127 ||
				      !j->done || (before.needs_started && !before.started)))
		abort();
	if (ev.type == SB_WP_STARTED && (before.started || !j->started))
		abort();
	if (ev.type == SB_WP_READY && (before.started || (j->types & 1u << SB_WP_READY)))
		abort();
}

static void reencode(const struct sb_wp_frame *f, unsigned types)
{
	SB_AUTO_BUF b = {0};
	if (sb_wp_encode(&b, f->hdr, f->payload, f->payload_len) < 0)
		abort();
	struct sb_wp_reader r;
	sb_wp_reader_init(&r);
	r.types = types;
	struct sb_wp_frame g;
	char why[128];
	if (sb_wp_reader_feed(&r, b.data, b.len) < 0 || sb_wp_reader_next(&r, &g, why, sizeof why) != 1 ||
	    g.type != f->type || g.payload_len != f->payload_len || memcmp(g.payload, f->payload, f->payload_len) ||
	    !json_equal(g.hdr, f->hdr) || sb_wp_reader_next(&r, &g, why, sizeof why) != 0)
		abort();
	sb_wp_reader_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t piece = (size_t)(data[0] & 0x7f) * 37 + 1;
	bool session = data[0] & 0x80;
	data++;
	size--;

	struct sb_wp_reader r;
	sb_wp_reader_init(&r);
	if (session)
		r.types = SB_WP_SESSION_TYPES;
	struct sb_wp_job jobs[J_N];
	for (int k = 0; k < J_N; k++)
		jobs[k] = job_of(k);
	int rc = 0;
	for (size_t off = 0; off < size && rc >= 0;) {
		size_t n = size - off < piece ? size - off : piece;
		if (sb_wp_reader_feed(&r, data + off, n) < 0)
			abort();
		off += n;
		struct sb_wp_frame f;
		char why[128] = "";
		while ((rc = sb_wp_reader_next(&r, &f, why, sizeof why)) == 1) {
			const char *lo = r.in.data, *hi = r.in.data + r.in.len;
			if (!json_is_object(f.hdr) || !(r.types & 1u << f.type) ||
			    (f.payload_len && f.type != SB_WP_OUT && f.type != SB_WP_DATA) ||
			    (f.payload_len && (f.payload < lo || f.payload + f.payload_len > hi)))
				abort();
			reencode(&f, r.types);
			for (int k = 0; k < J_N; k++)
				decode(&jobs[k], &f);
		}
		if (rc < 0 && (!why[0] || strlen(why) >= sizeof why))
			abort();
	}
	sb_wp_reader_free(&r);
	return 0;
}
