/* A job's figure stream, host side. Inside the sandbox the driver writes
 * each figure the code displays as one record on a pipe of its own (never
 * mixed into stdout or stderr), and the warm worker moves those bytes out as
 * `out` frames of the stream "figures" without reading them (a session's
 * controller relays them the same way):
 *
 *   record := length (4 bytes, big-endian) body
 *   body   := 'P' PNG-bytes           a figure
 *           | 'F' N PNG-bytes         a figure a session saved as
 *                                     figure-N.png in its workspace (N: 4
 *                                     bytes, big-endian; refused outside a
 *                                     session)
 *           | 'S' reason              a figure the driver did not send:
 *                                     'c' count, 'i' image size, 't' total
 *           | 'D' kind UTF-8-text     a display item (core/display.h): kind
 *                                     't' text, 'l' LaTeX, 'h' HTML, 's' SVG,
 *                                     'j' a 3D scene (a JSON object), whose
 *                                     PNG, if any, is the next record
 *           | 'X' reason              a display item not sent, as 'S'
 *
 * The host trusts none of it: records are parsed as the bytes arrive, a
 * figure is kept only under the caps (core/figure.h), at most one figure
 * under the per-image cap is buffered at a time, and a kept figure must
 * pass sb_png_check and the long-side cap. Figures and display items are
 * numbered apart, each in the order they came. */
#ifndef SAGEBOX_FIGSTREAM_H
#define SAGEBOX_FIGSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/figure.h"

struct sb_figstream {
	struct sb_figures *out;
	unsigned char head[4];
	size_t head_got;       /* < 4: reading a record's length */
	uint32_t len, got;     /* the body's length, and how much of it came */
	unsigned index;        /* the current record's figure number */
	int kind;              /* its first byte; -1 before it came */
	bool keep;             /* buffering a figure into png */
	char *png;
	size_t png_len;
	/* The workspace as the model names it ("/work") when 'F' records are
	 * accepted (a session's call); NULL: they are refused. */
	const char *saved_dir;
};

void sb_figstream_init(struct sb_figstream *s, struct sb_figures *out);
/* Bytes of the stream, as they came. -1: out of memory. */
int sb_figstream_feed(struct sb_figstream *s, const char *p, size_t n);
/* The stream ended: a record cut short is refused. Frees what it held. */
void sb_figstream_end(struct sb_figstream *s);

#endif
