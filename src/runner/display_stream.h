/* A job's display stream, host side. Inside the sandbox the driver writes
 * each item the code displays (core/display.h: a figure, text, LaTeX, ...)
 * as one record on a pipe of its own, never mixed into stdout or stderr,
 * and the warm worker moves those bytes out as `out` frames of the stream
 * "display" without reading them (a session's controller relays them the
 * same way):
 *
 *   record := length (4 bytes, big-endian) body
 *   body   := 'D' kind payload    an item: kind is its row's byte in
 *                                 core/display_kinds.c; a figure's payload
 *                                 is N (4 bytes, big-endian: the
 *                                 figure-N.png a session saved it as, 0:
 *                                 none) then its PNG
 *           | 'X' kind reason     an item the driver did not send: 'c' over
 *                                 its class's count, 'i' one over its size,
 *                                 't' over what is left of the total
 *           | 'E' kind            the items since the last item of kind (one
 *                                 that opens a group: an interact) were its
 *                                 own; not an item, counted nowhere
 *
 * An item that takes a picture (a 3D scene) may be followed by its PNG's
 * record. The host trusts none of it: records are parsed as the bytes
 * arrive, an item is kept only under its class's caps, at most one item
 * under the one-item cap is buffered at a time, and a kept item must pass
 * its kind's check. The items of a class are numbered together, in the
 * order they came; a record whose kind is unknown counts as a display item
 * when it says 'D' or 'X', as a figure otherwise. */
#ifndef SAGEBOX_DISPLAY_STREAM_H
#define SAGEBOX_DISPLAY_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/display.h"

struct sb_display_stream {
	struct sb_display *out;
	struct sb_display_ctx ctx;     /* what the kinds' checks get */
	unsigned char head[6];
	size_t head_got;               /* the length (4), the type, the kind */
	uint32_t len, got;             /* the body's length, and how much of it came */
	const struct sb_display_kind *kind;
	enum sb_display_class cls;     /* the class the record counts in */
	unsigned index;                /* its number in its class; 0: not counted yet */
	bool keep;                     /* buffering the payload into buf */
	char *buf;
	size_t buf_len;
};

/* saved_dir: the workspace as the model names it ("/work") when figures
 * may say where a session saved them (a session's call); NULL: they may
 * not. */
void sb_display_stream_init(struct sb_display_stream *s, struct sb_display *out, const char *saved_dir);
/* Bytes of the stream, as they came. -1: out of memory. */
int sb_display_stream_feed(struct sb_display_stream *s, const char *p, size_t n);
/* The stream ended: a record cut short is refused. Frees what it held. */
void sb_display_stream_end(struct sb_display_stream *s);

#endif
