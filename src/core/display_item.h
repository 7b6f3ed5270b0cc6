/* The shapes of what a job displayed (core/display.h): the kinds and their
 * classes, one item, and the store of a result's items. */
#ifndef SAGEBOX_DISPLAY_ITEM_H
#define SAGEBOX_DISPLAY_ITEM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/handle.h"

/* Why an item the code displayed is not in the result. */
enum sb_drop {
	SB_DROP_OVER_COUNT, /* more than its class's max_count */
	SB_DROP_TOO_BIG,    /* over max_one_bytes (a figure: even when shrunk) */
	SB_DROP_OVER_TOTAL, /* over what is left of max_total_bytes */
	SB_DROP_INVALID,    /* refused by the host: its check failed */
	SB_DROPS
};

/* Kinds of one class share caps and are numbered together ("figure 2",
 * "display item 3"). */
enum sb_display_class { SB_DCLASS_FIGURE, SB_DCLASS_ITEM, SB_DCLASSES };

struct sb_display_caps {
	unsigned max_count;      /* items of the class one result carries */
	size_t max_one_bytes;    /* bytes of one */
	size_t max_total_bytes;  /* bytes of all of the class in one result */
};

struct sb_display_class_row {
	const char *name;          /* in the caps the driver gets: "figure", "item" */
	const char *noun, *nouns;  /* "figure", "figures"; "display item", ... */
	const char *first_noun;    /* "the first is figure 3", "... is item 3" */
	const char *not_shown_key; /* the result's list of what was dropped */
	const char *too_big;       /* after "larger than N KiB": "", " even when scaled down" */
	const char *invalid;       /* what the host refused it as */
	struct sb_display_caps caps;
};

struct sb_display;
struct sb_display_item;

/* What a check may need besides the item. */
struct sb_display_ctx {
	/* The workspace as the model names it ("/work") when a figure may
	 * say where a session saved it; NULL: it may not. */
	const char *saved_dir;
};

/* A kind: one row of sb_display_kinds[] (core/display_kinds.c). */
struct sb_display_kind {
	const char *name;          /* its "kind" in the result: "png", "latex" */
	unsigned char wire;        /* its byte in the driver's records */
	enum sb_display_class cls;
	/* Bytes its record carries before what the caps count (a figure's
	 * saved number). */
	unsigned char prefix;
	/* The record after one of this kind may be its picture, a PNG (a 3D
	 * scene drawn flat); the picture is not an entry of its own. */
	bool takes_picture;
	/* The items after one of this kind, up to its end record ('E' and its
	 * byte), are its own (an interact's first rendering): its entry holds
	 * theirs as "items", which display_out.c adds (a kind never walks the
	 * list). One at a time: another of these inside is refused. */
	bool opens_group;
	/* Check the bytes (it->data, it->len: NUL-terminated) and keep what
	 * the kind needs of them (it->value, sizes). 0: kept; 1: refused, why
	 * says why; -1: out of memory. */
	int (*check)(struct sb_display_item *it, const struct sb_display_ctx *c, char *why, size_t whyn);
	/* Its entry in the result's "display" (new reference; NULL: none). */
	json_t *(*json)(const struct sb_display *d, const struct sb_display_item *it);
	/* Its MCP content block (new reference), or NULL: none (the text and
	 * structuredContent carry it). */
	json_t *(*content)(const struct sb_display_item *it);
	/* Its lines for the model, each ending in "\n" (NULL: none, the text
	 * is in stdout already). */
	void (*text)(FILE *out, const struct sb_display *d, const struct sb_display_item *it);
	/* The properties its entry adds to the output schema's items. */
	void (*schema)(json_t *properties);
	/* A list of its own in the result besides "display" (NULL: none), with
	 * an entry per item and that entry's schema. */
	const char *list_key;
	json_t *(*list_entry)(const struct sb_display_item *it);
	json_t *(*list_schema)(void);
};

struct sb_display_item {
	const struct sb_display_kind *kind;
	unsigned index;          /* 1-based among its class, in the order they came */
	unsigned ordinal;        /* 0-based among the kept ones of its class: a
				    figure's place among the result's images */
	char *data;              /* the bytes as sent (owned, NUL-terminated) */
	size_t len;
	json_t *value;           /* what the check parsed (a scene), or NULL (owned) */
	uint32_t width, height;  /* a figure's, from its IHDR */
	char *saved_path;        /* where a session saved a figure (owned), or NULL */
	long picture;            /* its picture's place in the list, or -1 */
	bool is_picture;         /* another item's picture: shown with it */
	long group;              /* the place of the item whose own it is (an
				    interact's), or -1: an entry of "display" */
};

/* Per class: what was kept and what was dropped, and why. */
struct sb_display_tally {
	unsigned seen;                    /* sent by the code, kept or not */
	unsigned kept;
	size_t bytes;                     /* of the kept ones */
	unsigned dropped[SB_DROPS];
	unsigned first_dropped[SB_DROPS]; /* index of the first, per reason */
	char invalid_why[96];             /* the first refusal's reason */
};

struct sb_display {
	struct sb_display_item *v;        /* kept, in order */
	size_t n;
	struct sb_display_tally by_class[SB_DCLASSES];
	long pending;                     /* an item that takes a picture, just kept; -1 none */
	bool pending_fresh;               /* it came in the record that just ended */
	long open;                        /* an item whose own items are coming; -1 none */
	/* The session the call ran in ("" none): an interact's controls work
	 * there and only there. */
	char session[SB_HANDLE_LEN];
};

#endif
