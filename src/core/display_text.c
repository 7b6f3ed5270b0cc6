/* The kinds that are text: plain text (what the cell printed, also in
 * stdout), LaTeX (the formula without its $ delimiters), HTML and SVG. Each
 * is valid UTF-8 or refused; its entry names it by its kind:
 * {"kind":"latex","latex":S}. */
#include <string.h>

#include "core/display_item.h"
#include "util/utf8.h"

/* Small HTML is given to the model as it is; larger only named. */
#define HTML_INLINE_MAX 4096

static int check(struct sb_display_item *it, const struct sb_display_ctx *c, char *why, size_t whyn)
{
	if (sb_utf8_valid(it->data, it->len, NULL))
		return 0;
	snprintf(why, whyn, "a display item that is not UTF-8");
	return 1;
}

static json_t *entry(const struct sb_display *d, const struct sb_display_item *it)
{
	return json_pack("{s:s, s:s%}", "kind", it->kind->name, it->kind->name, it->data, it->len);
}

static void schema_of(json_t *props, const char *name)
{
	json_object_set_new(props, name, json_pack("{s:s}", "type", "string"));
}

static void text_schema(json_t *props)
{
	schema_of(props, "text");
}

static void latex_schema(json_t *props)
{
	schema_of(props, "latex");
}

static void html_schema(json_t *props)
{
	schema_of(props, "html");
}

static void svg_schema(json_t *props)
{
	schema_of(props, "svg");
}

static void latex_text(FILE *out, const struct sb_display *d, const struct sb_display_item *it)
{
	fprintf(out, "$$ %s $$\n", it->data);
}

static void html_text(FILE *out, const struct sb_display *d, const struct sb_display_item *it)
{
	if (it->len <= HTML_INLINE_MAX)
		fprintf(out, "[HTML %u:]\n%s\n", it->index, it->data);
	else
		fprintf(out, "[HTML %u: %zu bytes, shown by viewers that render HTML]\n", it->index, it->len);
}

static void svg_text(FILE *out, const struct sb_display *d, const struct sb_display_item *it)
{
	fprintf(out, "[SVG image %u: %zu bytes, shown by viewers that render SVG]\n", it->index, it->len);
}

#define TEXT_KIND(nm, byte, line)                                                                               \
	{.name = #nm, .wire = byte, .cls = SB_DCLASS_ITEM, .check = check, .json = entry, .text = line,         \
	 .schema = nm##_schema}

/* Text is in stdout already: no line of its own. */
const struct sb_display_kind sb_display_text_kind = TEXT_KIND(text, 't', NULL);
const struct sb_display_kind sb_display_latex_kind = TEXT_KIND(latex, 'l', latex_text);
const struct sb_display_kind sb_display_html_kind = TEXT_KIND(html, 'h', html_text);
const struct sb_display_kind sb_display_svg_kind = TEXT_KIND(svg, 's', svg_text);
