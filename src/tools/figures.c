#include "tools/figures.h"

#include <nettle/base64.h>
#include <stdlib.h>

void sb_figure_line(char *buf, size_t n, const struct sb_figure *f, const char *saved_path)
{
	snprintf(buf, n, "[figure %u: %u×%u PNG%s%s]", f->index, (unsigned)f->width, (unsigned)f->height,
		 saved_path ? ", saved as " : "", saved_path ? saved_path : "");
}

/* Small HTML is given to the model as it is; larger only named. */
#define HTML_INLINE_MAX 4096

static void figure_text(FILE *out, const struct sb_figures *figs, long i)
{
	char line[4200];
	if (i < 0 || (size_t)i >= figs->n)
		return;
	sb_figure_line(line, sizeof line, &figs->v[i], figs->v[i].saved_path);
	fprintf(out, "%s\n", line);
}

/* What the model reads of each display item, in order (text items are in
 * stdout already). */
static void display_text(FILE *out, const struct sb_figures *figs)
{
	const struct sb_display *d = &figs->display;
	for (size_t i = 0; i < d->n; i++) {
		const struct sb_display_item *it = &d->v[i];
		switch (it->kind) {
		case SB_DISP_TEXT:
			break;
		case SB_DISP_LATEX:
			fprintf(out, "$$ %s $$\n", it->text);
			break;
		case SB_DISP_HTML:
			if (it->len <= HTML_INLINE_MAX)
				fprintf(out, "[HTML %u:]\n%s\n", it->index, it->text);
			else
				fprintf(out, "[HTML %u: %zu bytes, shown by viewers that render HTML]\n", it->index, it->len);
			break;
		case SB_DISP_SVG:
			fprintf(out, "[SVG image %u: %zu bytes, shown by viewers that render SVG]\n", it->index, it->len);
			break;
		case SB_DISP_THREEJS:
			fprintf(out, "[3D scene %u: an interactive three.js scene for viewers that render it%s]\n", it->index,
				it->fig >= 0 ? "; its picture follows" : "");
			figure_text(out, figs, it->fig);
			break;
		case SB_DISP_PNG:
			figure_text(out, figs, it->fig);
			break;
		}
	}
	char line[200];
	for (int why = 0; why < SB_FIG_DROPS; why++) {
		unsigned k = d->dropped[why];
		if (!k)
			continue;
		sb_display_drop_text(why, d, line, sizeof line);
		if (k == 1)
			fprintf(out, "[display item %u not shown: %s]\n", d->first_dropped[why], line);
		else
			fprintf(out, "[%u display items not shown, the first is item %u: %s]\n", k, d->first_dropped[why],
				line);
	}
}

bool sb_figures_any(const struct sb_figures *figs)
{
	return figs->n || sb_figures_dropped(figs) || figs->display.n || sb_display_dropped(&figs->display);
}

void sb_figures_text(FILE *out, const struct sb_figures *figs)
{
	char line[4200];
	if (figs->display.n || sb_display_dropped(&figs->display))
		display_text(out, figs);
	else
		for (size_t i = 0; i < figs->n; i++)
			figure_text(out, figs, (long)i);
	for (int why = 0; why < SB_FIG_DROPS; why++) {
		unsigned k = figs->dropped[why];
		if (!k)
			continue;
		sb_figure_drop_text((enum sb_figure_drop)why, figs, line, sizeof line);
		if (k == 1)
			fprintf(out, "[figure %u not shown: %s]\n", figs->first_dropped[why], line);
		else
			fprintf(out, "[%u figures not shown, the first is figure %u: %s]\n", k,
				figs->first_dropped[why], line);
	}
}

/* The PNG as base64 (malloc'd, NUL-terminated), or NULL. */
static char *base64(const char *p, size_t n)
{
	char *out = malloc(BASE64_ENCODE_RAW_LENGTH(n) + 1);
	if (!out)
		return NULL;
	base64_encode_raw(out, n, (const uint8_t *)p);
	out[BASE64_ENCODE_RAW_LENGTH(n)] = '\0';
	return out;
}

void sb_tool_result_figures(struct sb_tool_result *r, const struct sb_figures *figs)
{
	for (size_t i = 0; i < figs->n; i++) {
		char *b = base64(figs->v[i].png, figs->v[i].len);
		json_t *block = b ? json_pack("{s:s, s:s, s:s}", "type", "image", "data", b, "mimeType", "image/png")
				  : NULL;
		free(b);
		if (!block) {
			sb_tool_result_text(r, "(a figure was lost: out of memory)");
			continue;
		}
		if (!r->content)
			r->content = json_array();
		json_array_append_new(r->content, block);
	}
}
