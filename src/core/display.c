#include "core/display.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/figure.h"
#include "util/utf8.h"

void sb_display_free(struct sb_display *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].text);
		json_decref(d->v[i].scene);
	}
	free(d->v);
	memset(d, 0, sizeof *d);
	d->pending3d = -1;
}

size_t sb_display_items(const struct sb_display *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->n; i++)
		n += d->v[i].kind != SB_DISP_PNG;
	return n;
}

int sb_display_kind_of(unsigned char c)
{
	switch (c) {
	case 't':
		return SB_DISP_TEXT;
	case 'l':
		return SB_DISP_LATEX;
	case 'h':
		return SB_DISP_HTML;
	case 's':
		return SB_DISP_SVG;
	case 'j':
		return SB_DISP_THREEJS;
	default:
		return -1;
	}
}

static int push(struct sb_display *d, struct sb_display_item it)
{
	struct sb_display_item *v = realloc(d->v, (d->n + 1) * sizeof *v);
	if (!v)
		return -1;
	d->v = v;
	d->v[d->n++] = it;
	return 0;
}

int sb_display_add(struct sb_display *d, enum sb_display_kind kind, unsigned index, char *text, size_t len)
{
	json_t *scene = NULL;
	const char *why = NULL;
	if (!sb_utf8_valid(text, len, NULL))
		why = "a display item that is not UTF-8";
	else if (kind == SB_DISP_THREEJS) {
		/* The scene goes to viewers as data: only a JSON object passes. */
		scene = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
		if (!json_is_object(scene))
			why = "a 3D scene that is not a JSON object";
	}
	if (why) {
		json_decref(scene);
		free(text);
		sb_display_drop(d, index, SB_FIG_INVALID, why);
		return 1;
	}
	if (push(d, (struct sb_display_item){.kind = kind, .index = index, .text = text, .len = len, .scene = scene,
					     .fig = -1})) {
		json_decref(scene);
		free(text);
		return -1;
	}
	d->total_bytes += len;
	if (kind == SB_DISP_THREEJS) {
		d->pending3d = (long)d->n - 1;
		d->pending_fresh = true;
	}
	return 0;
}

int sb_display_add_png(struct sb_display *d, long fig)
{
	if (d->pending3d >= 0 && (size_t)d->pending3d < d->n && d->v[d->pending3d].kind == SB_DISP_THREEJS &&
	    d->v[d->pending3d].fig < 0) {
		d->v[d->pending3d].fig = fig;
		d->pending3d = -1;
		return 0;
	}
	return push(d, (struct sb_display_item){.kind = SB_DISP_PNG, .fig = fig});
}

void sb_display_record_done(struct sb_display *d)
{
	if (!d->pending_fresh)
		d->pending3d = -1;
	d->pending_fresh = false;
}

_Static_assert(SB_FIG_DROPS == sizeof ((struct sb_display *)0)->dropped / sizeof(unsigned),
	       "a display item is dropped for the reasons a figure is");

void sb_display_drop(struct sb_display *d, unsigned index, int why, const char *detail)
{
	sb_drop_count(d->dropped, d->first_dropped, d->invalid_why, sizeof d->invalid_why, index, why, detail);
}

unsigned sb_display_dropped(const struct sb_display *d)
{
	return sb_drop_total(d->dropped);
}

void sb_display_drop_text(int why, const struct sb_display *d, char *buf, size_t n)
{
	const struct sb_figure_caps *c = &sb_figure_caps;
	switch (why) {
	case SB_FIG_OVER_COUNT:
		snprintf(buf, n, "a result carries at most %u display items", c->max_items);
		return;
	case SB_FIG_TOO_BIG:
		snprintf(buf, n, "larger than %zu KiB", c->max_item_bytes >> 10);
		return;
	case SB_FIG_OVER_TOTAL:
		snprintf(buf, n, "a result carries at most %zu KiB of display items", c->max_items_total_bytes >> 10);
		return;
	default:
		break;
	}
	snprintf(buf, n, "refused by the host (%s)", d->invalid_why[0] ? d->invalid_why : "malformed");
}

/* A PNG item names its image content block (the bytes travel once: a result
 * at the figure caps stays under hosts' 1 MiB message limits). */
static json_t *png_item(const struct sb_figure *f, int index)
{
	return json_pack("{s:s, s:s, s:i, s:i, s:i}", "kind", "png", "mimeType", "image/png", "image", index, "width",
			 (int)f->width, "height", (int)f->height);
}

static const char *const kind_names[] = {
	[SB_DISP_TEXT] = "text", [SB_DISP_LATEX] = "latex", [SB_DISP_HTML] = "html",
	[SB_DISP_SVG] = "svg",   [SB_DISP_THREEJS] = "threejs", [SB_DISP_PNG] = "png",
};

json_t *sb_display_json(const struct sb_display *d, const struct sb_figures *figs)
{
	if (!d->n)
		return NULL;
	json_t *a = json_array();
	for (size_t i = 0; i < d->n; i++) {
		const struct sb_display_item *it = &d->v[i];
		json_t *e = NULL;
		if (it->kind == SB_DISP_PNG) {
			if (it->fig >= 0 && (size_t)it->fig < figs->n)
				e = png_item(&figs->v[it->fig], it->fig);
		} else if (it->kind == SB_DISP_THREEJS) {
			e = json_pack("{s:s, s:O}", "kind", "threejs", "scene", it->scene);
			if (e && it->fig >= 0)
				json_object_set_new(e, "png", json_integer(it->fig));
		} else {
			/* the key is the kind's name: {"kind":"latex","latex":S} */
			e = json_pack("{s:s, s:s%}", "kind", kind_names[it->kind], kind_names[it->kind], it->text,
				      it->len);
		}
		if (e)
			json_array_append_new(a, e);
	}
	return a;
}
