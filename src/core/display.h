/* What a job displayed, in order: one list of display items, of which a PNG
 * figure is one kind (text, LaTeX, HTML, SVG, a 3D scene are others). The
 * driver inside the sandbox sends them on one stream (runner/display_stream.h)
 * and the host keeps them here (the store), checked and under caps, with
 * what it dropped and why.
 *
 *   core/display_item.h   the shapes: a kind, its class, an item, the store
 *   core/display_caps.c   the classes, ONE table: caps, and their names
 *   core/display_png.c    a kind each (its check, its entry in the result's
 *   core/display_text.c     "display", its MCP content block, its line for
 *   core/display_scene.c    the model): PNG; text, LaTeX, HTML, SVG; 3D
 *   core/display_interact.c   scenes; an interact (its controls, its own items)
 *   core/display_kinds.c  the kinds, ONE table: a row per kind (its wire
 *                         byte, class, file)
 *   core/display.c        the store (this header)
 *   core/display_out.c    the one place that makes a result of it */
#ifndef SAGEBOX_DISPLAY_H
#define SAGEBOX_DISPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/display_item.h"

void sb_display_init(struct sb_display *d);
void sb_display_free(struct sb_display *d);
/* The next index of class c (an item sent, kept or not). */
unsigned sb_display_next_index(struct sb_display *d, enum sb_display_class c);
/* Whether n bytes of class c fit: -1 yes, else the cap they break. */
int sb_display_room(const struct sb_display *d, enum sb_display_class c, size_t n);
/* Take data (malloc'd, len bytes + NUL) as the next item of kind k, index
 * from sb_display_next_index: checked by the kind (refused: counted as
 * invalid, freed). 0: kept; 1: refused; -1: out of memory (freed). */
int sb_display_add(struct sb_display *d, const struct sb_display_kind *k, unsigned index, char *data, size_t len,
		   const struct sb_display_ctx *c);
/* A record of the stream ended: a picture must come in the record right
 * after its item's. */
void sb_display_record_done(struct sb_display *d);
/* The end record of kind k came: the open item of that kind has all its
 * own items (anything else: nothing happens). */
void sb_display_group_end(struct sb_display *d, const struct sb_display_kind *k);
/* Count a drop of class c (detail: an invalid one's reason). */
void sb_display_drop(struct sb_display *d, enum sb_display_class c, unsigned index, enum sb_drop why,
		     const char *detail);
unsigned sb_display_dropped(const struct sb_display *d, enum sb_display_class c);
/* Anything displayed, kept or not. */
bool sb_display_any(const struct sb_display *d);

#endif
