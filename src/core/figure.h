/* Figures a job displayed (a Sage plot shown, a matplotlib figure): PNG
 * images checked by the host, with the caps that bound them. The caps are
 * defined here once: the runner sends them to the driver inside the sandbox
 * (which scales and shrinks figures to fit) and holds the figure stream to
 * them itself (runner/figstream.c), whatever the sandbox sends. */
#ifndef SAGEBOX_FIGURE_H
#define SAGEBOX_FIGURE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/display.h"

struct sb_figure_caps {
	unsigned max_count;      /* figures one result carries */
	size_t max_image_bytes;  /* PNG bytes of one figure */
	size_t max_total_bytes;  /* PNG bytes of all figures of one result */
	uint32_t max_side;       /* pixels on the long side */
	/* Display items (core/display.h): text, LaTeX, HTML, SVG, 3D scenes. */
	unsigned max_items;            /* items one result carries */
	size_t max_item_bytes;         /* bytes of one item */
	size_t max_items_total_bytes;  /* bytes of all items of one result */
};
/* Sized for the clients: Claude Desktop refuses a tool result over 1 MiB,
 * and base64 makes 600 KiB of PNG 800 KiB of JSON. */
extern const struct sb_figure_caps sb_figure_caps;

/* Why a figure the code displayed is not in the result. */
enum sb_figure_drop {
	SB_FIG_OVER_COUNT,   /* more than max_count figures */
	SB_FIG_TOO_BIG,      /* over max_image_bytes even when shrunk */
	SB_FIG_OVER_TOTAL,   /* over what is left of max_total_bytes */
	SB_FIG_INVALID,      /* refused by the host: not a PNG it accepts */
	SB_FIG_DROPS
};

struct sb_figure {
	unsigned index;          /* 1-based: the order the code displayed them in */
	uint32_t width, height;  /* from IHDR, checked by the host */
	char *png;               /* the bytes (owned) */
	size_t len;
	/* Where a session saved it inside the sandbox (owned), or NULL: the
	 * text line names it when set. */
	char *saved_path;
};

struct sb_figures {
	struct sb_figure *v;     /* shown, at most max_count */
	size_t n;
	size_t total_bytes;      /* PNG bytes of the shown figures */
	unsigned seen;           /* figures the code displayed, shown or not */
	unsigned dropped[SB_FIG_DROPS];
	unsigned first_dropped[SB_FIG_DROPS]; /* index of the first, per reason */
	char invalid_why[96];    /* the first refusal's reason */
	struct sb_display display; /* everything displayed, in order */
};

void sb_figures_free(struct sb_figures *f);
/* Take png (malloc'd) as the next figure. -1: out of memory (png freed). */
int sb_figures_add(struct sb_figures *f, unsigned index, char *png, size_t len, uint32_t w, uint32_t h);
/* A drop counted in per-reason arrays of SB_FIG_DROPS (figures' and
 * display items'): the first index per reason, the first refusal's why. */
void sb_drop_count(unsigned *dropped, unsigned *first, char *why, size_t whyn, unsigned index, int reason,
		   const char *detail);
unsigned sb_drop_total(const unsigned *dropped);
void sb_figures_drop(struct sb_figures *f, unsigned index, enum sb_figure_drop why, const char *detail);
unsigned sb_figures_dropped(const struct sb_figures *f);
/* A phrase for a drop reason, with the caps: "a result carries at most 8
 * figures". */
void sb_figure_drop_text(enum sb_figure_drop why, const struct sb_figures *f, char *buf, size_t n);

/* The caps as the driver takes them in a run frame: {max_count,
 * max_image_bytes, max_total_bytes, max_side, max_items, max_item_bytes,
 * max_items_total_bytes} (new reference or NULL). */
json_t *sb_figure_caps_json(void);

/* Metadata for a result's JSON: {"figures": [{figure, mime_type, width,
 * height, bytes}], "figures_not_shown": [{reason, count, first}],
 * "display": [...] (core/display.h), "display_not_shown": [{reason,
 * message, count, first}]} are added to o when there is something to say. */
void sb_figures_to_json(const struct sb_figures *f, json_t *o);

#endif
