/* An interact (Sage's @interact, the driver's interact.py): what its
 * display item declares, checked, and the values a viewer sends for it,
 * checked against that declaration before anything runs in the session.
 *
 * The declaration comes from the sandbox (the driver's "Di" record): it is
 * parsed here and rebuilt from the fields each control type has, each
 * checked (types, sizes, ranges), so that nothing else reaches a viewer or
 * the session's record of its interacts:
 *
 *   {"id": "i" + 16 hex digits, "manual": bool,
 *    "controls": [{"name", "label", "type", ...}]}     at most 64 controls
 *
 *   type            fields                           a value
 *   slider          min, max, step, default          a number on the grid
 *                                                    min + k*step, in [min, max]
 *                   or options [label...], default   an index into options
 *   range_slider    the same, default [low, high]    [low, high], low <= high
 *   selector        options, buttons, default        an index into options
 *   checkbox        default                          true or false
 *   input_box       default, rows, width, evaluate   a string (<= 10000 chars)
 *   input_grid      rows, cols, width, default       rows x cols strings
 *                                                    (<= 1000 chars each)
 *   color_selector  default, hide_box                "#rrggbb"
 *   text_control    text                             none: it cannot be set
 *
 * Names are identifiers (at most 64 characters), labels at most 200
 * characters, options at most 1000 of at most 200 characters each. */
#ifndef SAGEBOX_INTERACT_H
#define SAGEBOX_INTERACT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define SB_INTERACT_ID_LEN 17 /* "i" + 16 hex digits */
#define SB_INTERACT_MAX_CONTROLS 64
#define SB_INTERACT_MAX_OPTIONS 1000
#define SB_INTERACT_MAX_LABEL 200
#define SB_INTERACT_MAX_NAME 64
#define SB_INTERACT_MAX_TEXT 10000
#define SB_INTERACT_MAX_CELLS 400
#define SB_INTERACT_MAX_CELL 1000

/* An interact's id as the driver makes it: "i" and 16 lowercase hex digits. */
bool sb_interact_id_ok(const char *id);

/* The declaration (JSON text of len bytes) checked and rebuilt: a new
 * reference, or NULL with why (a phrase: "control 2 (slider): its step is
 * not positive"). */
json_t *sb_interact_parse(const char *text, size_t len, char *why, size_t n);

/* values (a JSON object {name: value}; a control left out keeps its
 * default) against a declaration sb_interact_parse made: 0, or -1 with msg
 * naming the control, what it takes and what came. */
int sb_interact_check_values(const json_t *decl, const json_t *values, char *msg, size_t n);

/* "n: slider 1..20 step 1 (5), f: selector sin|cos (sin)": the controls in
 * a line of text for a model (malloc'd; NULL: no memory). */
char *sb_interact_summary(const json_t *decl);

#endif
