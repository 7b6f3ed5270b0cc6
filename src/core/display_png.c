/* The PNG kind: a figure (a Sage plot shown, a matplotlib figure). Its
 * record is N (4 bytes, big-endian: the figure-N.png a session saved it as
 * in its workspace; 0: not saved) and the PNG. The host checks the PNG's
 * shape (util/png.h) and its long side; the bytes travel once, as an image
 * content block, which its "display" entry names by its place. */
#include <nettle/base64.h>
#include <stdlib.h>
#include <string.h>

#include "core/display_caps.h"
#include "util/png.h"

/* The highest N a session's figure-N.png may have. */
#define SAVED_MAX 999999999u

static int check(struct sb_display_item *it, const struct sb_display_ctx *c, char *why, size_t whyn)
{
	if (it->len < 4) {
		snprintf(why, whyn, "a malformed figure record");
		return 1;
	}
	const unsigned char *b = (const unsigned char *)it->data;
	uint32_t saved = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	it->len -= 4;
	memmove(it->data, it->data + 4, it->len + 1);
	if (saved && !c->saved_dir) {
		snprintf(why, whyn, "a saved figure outside a session");
		return 1;
	}
	if (saved > SAVED_MAX) {
		snprintf(why, whyn, "a bad saved-figure number");
		return 1;
	}
	if (sb_png_check(it->data, it->len, &it->width, &it->height, why, whyn))
		return 1;
	if (it->width > sb_display_max_side || it->height > sb_display_max_side) {
		snprintf(why, whyn, "larger than the long-side cap");
		return 1;
	}
	if (saved) {
		/* Only a number comes from the sandbox: the host writes the name. */
		size_t n = strlen(c->saved_dir) + 32;
		if (!(it->saved_path = malloc(n)))
			return -1;
		snprintf(it->saved_path, n, "%s/figure-%u.png", c->saved_dir, (unsigned)saved);
	}
	return 0;
}

static json_t *entry(const struct sb_display *d, const struct sb_display_item *it)
{
	if (it->is_picture)
		return NULL; /* its item's entry names it */
	return json_pack("{s:s, s:s, s:i, s:i, s:i}", "kind", "png", "mimeType", "image/png", "image", (int)it->ordinal,
			 "width", (int)it->width, "height", (int)it->height);
}

static json_t *content(const struct sb_display_item *it)
{
	char *b64 = malloc(BASE64_ENCODE_RAW_LENGTH(it->len) + 1);
	json_t *block = NULL;
	if (b64) {
		base64_encode_raw(b64, it->len, (const uint8_t *)it->data);
		b64[BASE64_ENCODE_RAW_LENGTH(it->len)] = '\0';
		block = json_pack("{s:s, s:s, s:s}", "type", "image", "data", b64, "mimeType", "image/png");
		free(b64);
	}
	return block ? block : json_pack("{s:s, s:s}", "type", "text", "text", "(a figure was lost: out of memory)");
}

static void text(FILE *out, const struct sb_display *d, const struct sb_display_item *it)
{
	fprintf(out, "[figure %u: %u×%u PNG%s%s]\n", it->index, (unsigned)it->width, (unsigned)it->height,
		it->saved_path ? ", saved as " : "", it->saved_path ? it->saved_path : "");
}

static void schema(json_t *props)
{
	json_object_set_new(props, "mimeType", json_pack("{s:s}", "type", "string"));
	json_object_set_new(props, "image", json_pack("{s:s}", "type", "integer"));
	json_object_set_new(props, "width", json_pack("{s:s}", "type", "integer"));
	json_object_set_new(props, "height", json_pack("{s:s}", "type", "integer"));
}

static json_t *list_entry(const struct sb_display_item *it)
{
	json_t *e = json_pack("{s:i, s:s, s:i, s:i, s:I}", "figure", (int)it->index, "mime_type", "image/png", "width",
			      (int)it->width, "height", (int)it->height, "bytes", (json_int_t)it->len);
	if (e && it->saved_path)
		json_object_set_new(e, "saved_path", json_string(it->saved_path));
	return e;
}

/* The figures' metadata only; the PNGs are the image content blocks. */
static json_t *list_schema(void)
{
	return json_pack("{s:s, s:{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}}}", "type", "array",
			 "items", "type", "object", "properties", "figure", "type", "integer", "mime_type", "type",
			 "string", "width", "type", "integer", "height", "type", "integer", "bytes", "type", "integer",
			 "saved_path", "type", "string");
}

const struct sb_display_kind sb_display_png_kind = {
	.name = "png", .wire = 'p', .cls = SB_DCLASS_FIGURE, .prefix = 4,
	.check = check, .json = entry, .content = content, .text = text, .schema = schema,
	.list_key = "figures", .list_entry = list_entry, .list_schema = list_schema,
};
