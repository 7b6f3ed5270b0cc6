/* Capture of one output stream under a cap: the head and the tail are kept,
 * the middle is cut and replaced by a marker saying how much was cut (as the
 * persistent-container seed does). Writing far past the cap is a flood: the
 * supervisor then stops the job. */
#ifndef SAGEBOX_CAPTURE_H
#define SAGEBOX_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "runner/display_stream.h"
#include "runner/supervise.h"

struct sb_capture {
	const char *name;   /* "stdout" or "stderr", for the marker */
	size_t cap;         /* bytes kept at most (head + tail) */
	char *head;         /* first cap/2 bytes */
	size_t head_len;
	char *tail;         /* ring of the last cap - cap/2 bytes */
	size_t tail_cap, tail_start, tail_len;
	uint64_t total;     /* every byte written to the stream */
};

int sb_capture_init(struct sb_capture *c, const char *name, size_t cap);
void sb_capture_free(struct sb_capture *c);
int sb_capture_add(struct sb_capture *c, const char *p, size_t n);
/* More was written than is kept. */
bool sb_capture_truncated(const struct sb_capture *c);
/* Copy the last up to n kept bytes (for progress messages), UTF-8 safe,
 * into a malloc'd string. */
char *sb_capture_tail_copy(const struct sb_capture *c, size_t n, size_t *len);
/* Fill a result stream: head, marker, tail; invalid UTF-8 replaced. */
int sb_capture_finish(const struct sb_capture *c, struct sb_stream *out);

/* The supervisor's sink for a call: a job's two streams, each under the
 * same cap (a stream writing flood_factor times the cap stops the job), and
 * what it displayed, under their caps (runner/display_stream.h). */
struct sb_capture_sink {
	struct sb_sink sink; /* first: the supervisor's view */
	struct sb_capture out, err;
	struct sb_display display;
	struct sb_display_stream stream;
};

/* On failure neither stream is allocated. saved_dir: as
 * sb_display_stream_init's (a session's call: its workspace). */
int sb_capture_sink_init(struct sb_capture_sink *c, size_t cap, const char *saved_dir);
/* Fill res->out, res->err (an internal error when memory runs out) and
 * res->display, then free the captures. */
void sb_capture_sink_finish(struct sb_capture_sink *c, struct sb_result *res);

#endif
