/* Fuzz target: the host's reader of worker frames (runner/wproto.c). The
 * worker runs inside the sandbox next to the model's code, so its bytes are
 * untrusted.
 *
 * Input: byte 0 picks the size of the reads (the bytes arrive in pieces of
 * that size, as a pipe may deliver them), the rest is what the worker
 * wrote. Checked: a frame returned is one of the known types with an
 * object header, its payload lies inside the bytes received and only out
 * frames carry one, and the frame encoded again by sb_wp_encode reads back
 * as the same frame. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runner/wproto.h"

static void reencode(const struct sb_wp_frame *f)
{
	SB_AUTO_BUF b = {0};
	if (sb_wp_encode(&b, f->hdr, f->payload, f->payload_len) < 0)
		abort();
	struct sb_wp_reader r;
	sb_wp_reader_init(&r);
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
	size_t piece = (size_t)data[0] * 37 + 1;
	data++;
	size--;

	struct sb_wp_reader r;
	sb_wp_reader_init(&r);
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
			if (!json_is_object(f.hdr) || f.type > SB_WP_DONE || (f.payload_len && f.type != SB_WP_OUT) ||
			    (f.payload_len && (f.payload < lo || f.payload + f.payload_len > hi)))
				abort();
			reencode(&f);
		}
		if (rc < 0 && (!why[0] || strlen(why) >= sizeof why))
			abort();
	}
	sb_wp_reader_free(&r);
	return 0;
}
