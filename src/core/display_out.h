/* What a job displayed, into a result: the one place that turns the items
 * (core/display.h) into structuredContent, MCP content blocks and the
 * model's lines, and that says what was not shown and why. Each item
 * speaks through its kind's row (core/display_kinds.c). */
#ifndef SAGEBOX_DISPLAY_OUT_H
#define SAGEBOX_DISPLAY_OUT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "core/display_item.h"

/* "display", each kind's own list and each class's not-shown list, added
 * to o when there is something to say. */
void sb_display_to_json(const struct sb_display *d, json_t *o);
/* The entries of the items of group (the place of the item whose own they
 * are; -1: the result's "display"), in order (new reference). */
json_t *sb_display_entries(const struct sb_display *d, long group);
/* Append each item's MCP content block, in order, to *content (made when
 * NULL). */
void sb_display_content(const struct sb_display *d, json_t **content);
/* In order, each item's lines for the model, then a line per class and
 * reason of what was not shown. */
void sb_display_text(FILE *out, const struct sb_display *d);
/* The phrase for a drop: "a result carries at most 8 figures". */
void sb_display_drop_text(const struct sb_display *d, enum sb_display_class c, enum sb_drop why, char *buf,
			  size_t n);
/* The output schema of "display", of each kind's list and of the
 * not-shown lists, added to an object schema's properties. */
void sb_display_schema(json_t *properties);

#endif
