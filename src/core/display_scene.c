/* The 3D scene kind ("threejs"): the scene as Sage's three.js page consumes
 * it, a JSON object, which viewers draw (src/mcp/viewer); the record after
 * it may be its picture, a PNG Sage drew with Tachyon, which its entry
 * names by its place among the result's images. */
#include "core/display_item.h"
#include "util/utf8.h"

static int check(struct sb_display_item *it, const struct sb_display_ctx *c, char *why, size_t whyn)
{
	if (!sb_utf8_valid(it->data, it->len, NULL)) {
		snprintf(why, whyn, "a display item that is not UTF-8");
		return 1;
	}
	/* The scene goes to viewers as data: only a JSON object passes. */
	it->value = json_loadb(it->data, it->len, JSON_REJECT_DUPLICATES, NULL);
	if (json_is_object(it->value))
		return 0;
	snprintf(why, whyn, "a 3D scene that is not a JSON object");
	return 1;
}

static json_t *entry(const struct sb_display *d, const struct sb_display_item *it)
{
	json_t *e = json_pack("{s:s, s:O}", "kind", "threejs", "scene", it->value);
	if (e && it->picture >= 0)
		json_object_set_new(e, "png", json_integer(d->v[it->picture].ordinal));
	return e;
}

static void text(FILE *out, const struct sb_display *d, const struct sb_display_item *it)
{
	fprintf(out, "[3D scene %u: an interactive three.js scene for viewers that render it%s]\n", it->index,
		it->picture >= 0 ? "; its picture follows" : "");
	if (it->picture >= 0)
		d->v[it->picture].kind->text(out, d, &d->v[it->picture]);
}

static void schema(json_t *props)
{
	json_object_set_new(props, "scene", json_pack("{s:s}", "type", "object"));
	json_object_set_new(props, "png", json_pack("{s:s}", "type", "integer"));
}

const struct sb_display_kind sb_display_scene_kind = {
	.name = "threejs", .wire = 'j', .cls = SB_DCLASS_ITEM, .takes_picture = true,
	.check = check, .json = entry, .text = text, .schema = schema,
};
