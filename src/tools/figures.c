#include "tools/figures.h"

#include <nettle/base64.h>
#include <stdlib.h>

void sb_figure_line(char *buf, size_t n, const struct sb_figure *f, const char *saved_path)
{
	snprintf(buf, n, "[figure %u: %u×%u PNG%s%s]", f->index, (unsigned)f->width, (unsigned)f->height,
		 saved_path ? ", saved as " : "", saved_path ? saved_path : "");
}

void sb_figures_text(FILE *out, const struct sb_figures *figs)
{
	char line[4200];
	for (size_t i = 0; i < figs->n; i++) {
		sb_figure_line(line, sizeof line, &figs->v[i], figs->v[i].saved_path);
		fprintf(out, "%s\n", line);
	}
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
