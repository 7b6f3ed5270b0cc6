#include "core/display_caps.h"

/* Sized for the clients: Claude Desktop refuses a tool result over 1 MiB,
 * and base64 makes 600 KiB of PNG 800 KiB of JSON. A plot3d of Sage's
 * default 40x40 points is a ~145 KB scene. */
const struct sb_display_class_row sb_display_classes[SB_DCLASSES] = {
	[SB_DCLASS_FIGURE] = {"figure", "figure", "figures", "figure", "figures_not_shown",
			      " even when scaled down", "not a PNG the host accepts",
			      {.max_count = 8, .max_one_bytes = 400u << 10, .max_total_bytes = 600u << 10}},
	[SB_DCLASS_ITEM] = {"item", "display item", "display items", "item", "display_not_shown", "",
			    "refused by the host",
			    {.max_count = 32, .max_one_bytes = 256u << 10, .max_total_bytes = 320u << 10}},
};

const uint32_t sb_display_max_side = 1024;
