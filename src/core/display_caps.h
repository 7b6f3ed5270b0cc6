/* The classes of display kinds (core/display_item.h), ONE table: the caps
 * each holds its items to, on both sides of the sandbox (the driver gets
 * them in the run frame and scales and shrinks to them; the host holds
 * the stream to them itself), and the words that name them. */
#ifndef SAGEBOX_DISPLAY_CAPS_H
#define SAGEBOX_DISPLAY_CAPS_H

#include <stdint.h>

#include "core/display_item.h"

extern const struct sb_display_class_row sb_display_classes[SB_DCLASSES];
/* Pixels on a figure's long side, at most. */
extern const uint32_t sb_display_max_side;

#endif
