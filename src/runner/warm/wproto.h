/* The worker protocol's framing (host side). A frame is a 4-byte big-endian
 * length, then that many bytes: a one-line JSON header and, for frames that
 * carry bytes (output chunks), "\n" and the bytes. A run frame is followed
 * by the job's code as code_bytes raw bytes outside the frame (protocol
 * v2, docs/WARM.md). The worker inside the sandbox speaks the same
 * (src/worker/driver/channel.py).
 *
 * The reader treats the worker as untrusted: a frame longer than its limit,
 * a header that is not a JSON object with a known "type", or a payload on a
 * frame that must not carry one is a protocol error, and the caller kills
 * the whole sandbox. */
#ifndef SAGEBOX_WPROTO_H
#define SAGEBOX_WPROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* The largest frame a worker may send: one 64 KiB output chunk and its
 * header, with room to spare. Anything larger is an attack or a bug. */
#define SB_WP_MAX_IN (256u * 1024)

enum sb_wp_type { SB_WP_READY, SB_WP_STARTED, SB_WP_OUT, SB_WP_DONE, SB_WP_DATA, SB_WP_REPLY };

/* The frame types a reader accepts (a bit per type): a warm worker's, or a
 * session controller's (runner/sessions/sess.c: also file data and replies). */
#define SB_WP_WORKER_TYPES (1u << SB_WP_READY | 1u << SB_WP_STARTED | 1u << SB_WP_OUT | 1u << SB_WP_DONE)
#define SB_WP_SESSION_TYPES (SB_WP_WORKER_TYPES | 1u << SB_WP_DATA | 1u << SB_WP_REPLY)

struct sb_wp_frame {
	enum sb_wp_type type;
	json_t *hdr;          /* owned by the reader until the next call */
	const char *payload;  /* bytes after the header's "\n" (out frames) */
	size_t payload_len;
};

struct sb_wp_reader {
	struct sb_buf in;     /* bytes received and not yet consumed */
	size_t off;           /* start of the next frame in `in` */
	json_t *last;         /* header of the frame last returned */
	unsigned types;       /* accepted types (init: SB_WP_WORKER_TYPES) */
};

void sb_wp_reader_init(struct sb_wp_reader *r);
void sb_wp_reader_free(struct sb_wp_reader *r);
/* Append bytes read from the worker. -1 when out of memory. */
int sb_wp_reader_feed(struct sb_wp_reader *r, const void *p, size_t n);
/* 1: a frame is in *f (valid until the next call); 0: more bytes needed;
 * -1: protocol error, why says what was wrong. */
int sb_wp_reader_next(struct sb_wp_reader *r, struct sb_wp_frame *f, char *why, size_t whyn);

/* ---- one job's frames, decoded and checked once for every feeder ----
 *
 * A feeder (the warm and fresh worker's, runner/warm/worker_job.c; a session's
 * call or background job, runner/sessions/sess_feed.c) holds a struct sb_wp_job
 * for its job and hands it each frame. sb_wp_job_decode checks the frame
 * against the protocol and the job's place in it and returns a typed
 * event, or -1 with why: the caller then treats its far side as broken
 * (kills the worker's sandbox, or ends the session). Rejected alike for
 * every feeder: a type this job never gets, a frame for another job (no
 * integer id, or not this job's), a second ready or started frame, output
 * on an unknown stream, output or done before started where a started
 * frame is due, anything after done, a done frame whose exit_code (-1 to
 * 255) or signal (0 to 127) is missing or out of range, whose flags are
 * not booleans, that lacks a flag the job needs, or whose reason is not a
 * string, and a reply whose error is not a string. */

/* The flags a done frame may carry (true when present and true). */
enum {
	SB_WP_DONE_TIMED_OUT = 1u << 0,   /* the worker's own deadline */
	SB_WP_DONE_CANCELLED = 1u << 1,   /* after a cancel frame */
	SB_WP_DONE_FLOODED = 1u << 2,     /* the worker's own output cap */
	SB_WP_DONE_INTERRUPTED = 1u << 3, /* a session call after an interrupt */
	SB_WP_DONE_RESTARTED = 1u << 4,   /* a session's interpreter was restarted */
	SB_WP_DONE_KILLED = 1u << 5,      /* a session's job after a jobkill */
};

struct sb_wp_event {
	enum sb_wp_type type;  /* READY, STARTED, OUT, DONE or REPLY */
	json_t *hdr;           /* the frame's header (READY: the worker's report) */
	/* OUT */
	int stream;            /* enum sb_stream_id (runner/supervise.h) */
	const char *payload;
	size_t payload_len;
	/* DONE */
	int exit_code, signal;
	unsigned flags;        /* SB_WP_DONE_* */
	const char *reason;    /* NULL when none; valid while the frame is */
	/* REPLY: the far side refused the request */
	const char *error;     /* NULL when it gave no reason */
};

/* Where one job stands; set id, types and the rules, zero the rest. */
struct sb_wp_job {
	json_int_t id;
	unsigned types;        /* the frame types this job may get (1u << SB_WP_*) */
	bool needs_started;    /* output and done only after a started frame */
	unsigned done_needs;   /* SB_WP_DONE_* its done frame must carry (true or false) */
	bool started, done;    /* what it has had (a caller may set started) */
};

/* 0: *ev is the frame as an event (valid while f is), the job's state
 * moved on; -1: the frame breaks the protocol, why says how. A ready frame
 * is taken at most once and only before started. */
int sb_wp_job_decode(struct sb_wp_job *j, const struct sb_wp_frame *f, struct sb_wp_event *ev, char *why,
		     size_t whyn);

/* Append one frame (header + optional payload) to out. */
int sb_wp_encode(struct sb_buf *out, json_t *hdr, const void *payload, size_t n);

#endif
