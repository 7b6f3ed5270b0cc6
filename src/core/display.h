/* What a job displayed, in order: every object Sage's display
 * manager showed in its richest form (the driver's display.py) and every
 * figure. Text, LaTeX, HTML, SVG and three.js scenes come from the sandbox
 * as display items under caps of their own (core/figure.h's table); a PNG
 * item is a figure of struct sb_figures, named by its place there.
 *
 * In a result's JSON this is "display" (docs/ARCHITECTURE.md, "Rich
 * output"):
 *   {"kind":"text","text":S} | {"kind":"latex","latex":S}
 * | {"kind":"html","html":S} | {"kind":"svg","svg":S}
 * | {"kind":"png","mimeType":"image/png","data":BASE64,"width":N,"height":N}
 * | {"kind":"threejs","scene":OBJ,"png":INDEX}   (png: the index of the
 *   scene's PNG among the result's image content blocks, when it has one) */
#ifndef SAGEBOX_DISPLAY_H
#define SAGEBOX_DISPLAY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum sb_display_kind { SB_DISP_TEXT, SB_DISP_LATEX, SB_DISP_HTML, SB_DISP_SVG, SB_DISP_THREEJS, SB_DISP_PNG };

struct sb_display_item {
	enum sb_display_kind kind;
	unsigned index;   /* 1-based among the display items sent (not PNG) */
	char *text;       /* owned, valid UTF-8, NUL-terminated; NULL for PNG */
	size_t len;
	json_t *scene;    /* THREEJS: the scene, a JSON object (owned) */
	long fig;         /* PNG, THREEJS: the figure's place in sb_figures.v; -1 none */
};

/* Why an item is not in the result: as enum sb_figure_drop. */
struct sb_display {
	struct sb_display_item *v;
	size_t n;
	size_t total_bytes;  /* bytes of the items kept (PNG not counted) */
	unsigned seen;       /* items the code sent, kept or not */
	unsigned dropped[4];
	unsigned first_dropped[4];
	char invalid_why[96];
	long pending3d;      /* a scene just kept, waiting for its PNG; -1 none */
	bool pending_fresh;  /* it came in the record that just ended */
};

void sb_display_free(struct sb_display *d);
/* Items kept (PNG not counted). */
size_t sb_display_items(const struct sb_display *d);
/* A record's kind byte as a kind; -1: unknown. */
int sb_display_kind_of(unsigned char c);
/* Take text (malloc'd, len bytes + NUL) as the next item, checked: UTF-8,
 * and a JSON object for THREEJS. 1: refused (counted as invalid, freed);
 * -1: out of memory (freed). */
int sb_display_add(struct sb_display *d, enum sb_display_kind kind, unsigned index, char *text, size_t len);
/* A figure kept: the PNG item for it, or the pending 3D scene's PNG. */
int sb_display_add_png(struct sb_display *d, long fig);
/* A record of the figure stream ended: a scene's PNG must come in the
 * record right after the scene's. */
void sb_display_record_done(struct sb_display *d);
void sb_display_drop(struct sb_display *d, unsigned index, int why, const char *detail);
unsigned sb_display_dropped(const struct sb_display *d);
struct sb_figures;
/* The result's "display" array (new reference), or NULL when nothing was
 * displayed; figs gives the PNG items their bytes. */
json_t *sb_display_json(const struct sb_display *d, const struct sb_figures *figs);
/* "a result carries at most 32 display items" (why: enum sb_figure_drop). */
void sb_display_drop_text(int why, const struct sb_display *d, char *buf, size_t n);

#endif
