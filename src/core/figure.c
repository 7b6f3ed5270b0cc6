#include "core/figure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct sb_figure_caps sb_figure_caps = {
	.max_count = 8,
	.max_image_bytes = 400u << 10,
	.max_total_bytes = 600u << 10,
	.max_side = 1024,
	/* A plot3d of Sage's default 40x40 points is a ~145 KB scene. */
	.max_items = 32,
	.max_item_bytes = 256u << 10,
	.max_items_total_bytes = 320u << 10,
};

json_t *sb_figure_caps_json(void)
{
	const struct sb_figure_caps *c = &sb_figure_caps;
	return json_pack("{s:i, s:I, s:I, s:i, s:i, s:I, s:I}", "max_count", (int)c->max_count, "max_image_bytes",
			 (json_int_t)c->max_image_bytes, "max_total_bytes", (json_int_t)c->max_total_bytes, "max_side",
			 (int)c->max_side, "max_items", (int)c->max_items, "max_item_bytes",
			 (json_int_t)c->max_item_bytes, "max_items_total_bytes", (json_int_t)c->max_items_total_bytes);
}

void sb_figures_free(struct sb_figures *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].png);
		free(f->v[i].saved_path);
	}
	free(f->v);
	sb_display_free(&f->display);
	memset(f, 0, sizeof *f);
	f->display.pending3d = -1;
}

int sb_figures_add(struct sb_figures *f, unsigned index, char *png, size_t len, uint32_t w, uint32_t h)
{
	struct sb_figure *v = realloc(f->v, (f->n + 1) * sizeof *v);
	if (!v) {
		free(png);
		return -1;
	}
	f->v = v;
	f->v[f->n++] = (struct sb_figure){.index = index, .width = w, .height = h, .png = png, .len = len};
	f->total_bytes += len;
	return 0;
}

void sb_drop_count(unsigned *dropped, unsigned *first, char *why, size_t whyn, unsigned index, int reason,
		   const char *detail)
{
	if (reason < 0 || reason >= SB_FIG_DROPS)
		return;
	if (!dropped[reason]++)
		first[reason] = index;
	if (reason == SB_FIG_INVALID && detail && !why[0])
		snprintf(why, whyn, "%s", detail);
}

unsigned sb_drop_total(const unsigned *dropped)
{
	unsigned n = 0;
	for (int i = 0; i < SB_FIG_DROPS; i++)
		n += dropped[i];
	return n;
}

void sb_figures_drop(struct sb_figures *f, unsigned index, enum sb_figure_drop why, const char *detail)
{
	sb_drop_count(f->dropped, f->first_dropped, f->invalid_why, sizeof f->invalid_why, index, why, detail);
}

unsigned sb_figures_dropped(const struct sb_figures *f)
{
	return sb_drop_total(f->dropped);
}

void sb_figure_drop_text(enum sb_figure_drop why, const struct sb_figures *f, char *buf, size_t n)
{
	const struct sb_figure_caps *c = &sb_figure_caps;
	switch (why) {
	case SB_FIG_OVER_COUNT:
		snprintf(buf, n, "a result carries at most %u figures", c->max_count);
		return;
	case SB_FIG_TOO_BIG:
		snprintf(buf, n, "larger than %zu KiB even when scaled down", c->max_image_bytes >> 10);
		return;
	case SB_FIG_OVER_TOTAL:
		snprintf(buf, n, "a result carries at most %zu KiB of figures", c->max_total_bytes >> 10);
		return;
	case SB_FIG_INVALID:
	case SB_FIG_DROPS:
		break;
	}
	snprintf(buf, n, "not a PNG the host accepts (%s)", f->invalid_why[0] ? f->invalid_why : "malformed");
}

static const char *const drop_names[SB_FIG_DROPS] = {
	[SB_FIG_OVER_COUNT] = "over_count",
	[SB_FIG_TOO_BIG] = "too_big",
	[SB_FIG_OVER_TOTAL] = "over_total",
	[SB_FIG_INVALID] = "invalid",
};

static void display_to_json(const struct sb_figures *f, json_t *o)
{
	const struct sb_display *d = &f->display;
	json_t *a = sb_display_json(d, f);
	if (a)
		json_object_set_new(o, "display", a);
	if (!sb_display_dropped(d))
		return;
	a = json_array();
	for (int i = 0; i < SB_FIG_DROPS; i++) {
		if (!d->dropped[i])
			continue;
		char why[160];
		sb_display_drop_text(i, d, why, sizeof why);
		json_array_append_new(a, json_pack("{s:s, s:s, s:i, s:i}", "reason", drop_names[i], "message", why,
						   "count", (int)d->dropped[i], "first", (int)d->first_dropped[i]));
	}
	json_object_set_new(o, "display_not_shown", a);
}

void sb_figures_to_json(const struct sb_figures *f, json_t *o)
{
	display_to_json(f, o);
	if (f->n) {
		json_t *a = json_array();
		for (size_t i = 0; i < f->n; i++) {
			const struct sb_figure *g = &f->v[i];
			json_t *e = json_pack("{s:i, s:s, s:i, s:i, s:I}", "figure", (int)g->index, "mime_type",
					      "image/png", "width", (int)g->width, "height", (int)g->height, "bytes",
					      (json_int_t)g->len);
			if (g->saved_path)
				json_object_set_new(e, "saved_path", json_string(g->saved_path));
			json_array_append_new(a, e);
		}
		json_object_set_new(o, "figures", a);
	}
	if (!sb_figures_dropped(f))
		return;
	json_t *a = json_array();
	for (int i = 0; i < SB_FIG_DROPS; i++) {
		if (!f->dropped[i])
			continue;
		char why[160];
		sb_figure_drop_text((enum sb_figure_drop)i, f, why, sizeof why);
		json_array_append_new(a, json_pack("{s:s, s:s, s:i, s:i}", "reason", drop_names[i], "message", why,
						   "count", (int)f->dropped[i], "first", (int)f->first_dropped[i]));
	}
	json_object_set_new(o, "figures_not_shown", a);
}
