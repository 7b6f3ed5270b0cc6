/* The display kinds, ONE table (core/display_kinds.c): a kind's row points
 * at its file (its check, JSON, content block and line). */
#ifndef SAGEBOX_DISPLAY_KINDS_H
#define SAGEBOX_DISPLAY_KINDS_H

#include <jansson.h>
#include <stddef.h>

#include "core/display_item.h"

extern const struct sb_display_kind *const sb_display_kinds[];
extern const size_t sb_display_kinds_count;
/* The kind of a wire byte, or of a name; NULL: none. */
const struct sb_display_kind *sb_display_kind_of(unsigned char wire);
const struct sb_display_kind *sb_display_kind_named(const char *name);
/* What the driver gets in a job's run frame: {max_side, classes: {NAME:
 * [max_count, max_one_bytes, max_total_bytes]}, kinds: {NAME: [WIRE,
 * CLASS]}} (new reference or NULL). */
json_t *sb_display_caps_json(void);

#endif
