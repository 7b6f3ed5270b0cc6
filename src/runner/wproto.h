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
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* The largest frame a worker may send: one 64 KiB output chunk and its
 * header, with room to spare. Anything larger is an attack or a bug. */
#define SB_WP_MAX_IN (256u * 1024)

enum sb_wp_type { SB_WP_READY, SB_WP_STARTED, SB_WP_OUT, SB_WP_DONE, SB_WP_DATA, SB_WP_REPLY };

/* The frame types a reader accepts (a bit per type): a warm worker's, or a
 * session controller's (runner/sess.c: also file data and replies). */
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

/* Append one frame (header + optional payload) to out. */
int sb_wp_encode(struct sb_buf *out, json_t *hdr, const void *payload, size_t n);

#endif
