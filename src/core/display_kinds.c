/* The display kinds: ONE table. A new kind is a file of its own (its check,
 * its JSON, its content block and its line) and a row below; the driver
 * learns its wire byte and class from the run frame (sb_display_caps_json),
 * and the host's stream, store, result, content and output schema take it
 * from here. */
#include "core/display_kinds.h"

#include <string.h>

#include "core/display_caps.h"

/* Each kind's row, in its own file. */
extern const struct sb_display_kind sb_display_png_kind;   /* display_png.c */
extern const struct sb_display_kind sb_display_text_kind;  /* display_text.c */
extern const struct sb_display_kind sb_display_latex_kind; /* display_text.c */
extern const struct sb_display_kind sb_display_html_kind;  /* display_text.c */
extern const struct sb_display_kind sb_display_svg_kind;   /* display_text.c */
extern const struct sb_display_kind sb_display_scene_kind; /* display_scene.c */
extern const struct sb_display_kind sb_display_interact_kind; /* display_interact.c */

/* In the order a viewer lists them in the output schema. */
const struct sb_display_kind *const sb_display_kinds[] = {
	&sb_display_text_kind, &sb_display_latex_kind, &sb_display_html_kind,
	&sb_display_png_kind,  &sb_display_svg_kind,   &sb_display_scene_kind, &sb_display_interact_kind,
};
const size_t sb_display_kinds_count = sizeof sb_display_kinds / sizeof *sb_display_kinds;

const struct sb_display_kind *sb_display_kind_of(unsigned char wire)
{
	for (size_t i = 0; i < sb_display_kinds_count; i++)
		if (sb_display_kinds[i]->wire == wire)
			return sb_display_kinds[i];
	return NULL;
}

const struct sb_display_kind *sb_display_kind_named(const char *name)
{
	for (size_t i = 0; name && i < sb_display_kinds_count; i++)
		if (!strcmp(sb_display_kinds[i]->name, name))
			return sb_display_kinds[i];
	return NULL;
}

json_t *sb_display_caps_json(void)
{
	json_t *classes = json_object(), *kinds = json_object();
	for (int c = 0; c < SB_DCLASSES; c++) {
		const struct sb_display_caps *k = &sb_display_classes[c].caps;
		json_object_set_new(classes, sb_display_classes[c].name,
				    json_pack("[i, I, I]", (int)k->max_count, (json_int_t)k->max_one_bytes,
					      (json_int_t)k->max_total_bytes));
	}
	for (size_t i = 0; i < sb_display_kinds_count; i++) {
		const struct sb_display_kind *k = sb_display_kinds[i];
		char wire[2] = {(char)k->wire, '\0'};
		json_object_set_new(kinds, k->name, json_pack("[s, s]", wire, sb_display_classes[k->cls].name));
	}
	return json_pack("{s:i, s:o, s:o}", "max_side", (int)sb_display_max_side, "classes", classes, "kinds", kinds);
}
