/* The host's side of what a job displays: the PNG shape check, the display
 * stream's records and caps (whatever bytes the sandbox sends), the one
 * table of kinds, the text lines, the content blocks and the result's
 * JSON. */
#include <stdlib.h>

#include "check.h"
#include "core/display.h"
#include "core/display_caps.h"
#include "core/display_kinds.h"
#include "core/display_out.h"
#include "runner/display_stream.h"
#include "util/png.h"

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* A PNG of the right shape: signature, IHDR (w x h, RGBA 8 bit), one IDAT
 * of idat bytes, IEND. (The host does not decode pixels or check CRCs.) */
static unsigned char *png(uint32_t w, uint32_t h, size_t idat, size_t *len)
{
	*len = 8 + 25 + 12 + idat + 12;
	unsigned char *p = calloc(1, *len), *q = p;
	memcpy(q, "\x89PNG\r\n\x1a\n", 8);
	q += 8;
	put32(q, 13);
	memcpy(q + 4, "IHDR", 4);
	put32(q + 8, w);
	put32(q + 12, h);
	q[16] = 8; /* depth */
	q[17] = 6; /* RGBA */
	q += 25;
	put32(q, (uint32_t)idat);
	memcpy(q + 4, "IDAT", 4);
	q += 12 + idat;
	put32(q, 0);
	memcpy(q + 4, "IEND", 4);
	return p;
}

/* One record of the display stream: length, type, kind, body. */
static unsigned char *record(char type, char kind, const void *body, size_t n, size_t *len)
{
	*len = 4 + 2 + n;
	unsigned char *r = malloc(*len);
	put32(r, (uint32_t)(2 + n));
	r[4] = (unsigned char)type;
	r[5] = (unsigned char)kind;
	if (n)
		memcpy(r + 6, body, n);
	return r;
}

/* One record into the stream: what feed returns. */
static int feed_record(struct sb_display_stream *s, char type, char kind, const void *body, size_t n)
{
	size_t rn;
	unsigned char *r = record(type, kind, body, n, &rn);
	int rc = sb_display_stream_feed(s, (const char *)r, rn);
	free(r);
	return rc;
}

/* A figure's record body: the saved number, then the PNG (malloc'd). */
static unsigned char *figure_body(uint32_t saved, const unsigned char *p, size_t n, size_t *len)
{
	*len = 4 + n;
	unsigned char *b = malloc(*len);
	put32(b, saved);
	memcpy(b + 4, p, n);
	return b;
}

static int feed_figure(struct sb_display_stream *s, uint32_t saved, const unsigned char *p, size_t n)
{
	size_t bn;
	unsigned char *b = figure_body(saved, p, n, &bn);
	int rc = feed_record(s, 'D', 'p', b, bn);
	free(b);
	return rc;
}

static void feed_png(struct sb_display_stream *s, uint32_t w, uint32_t h, size_t idat)
{
	size_t n;
	unsigned char *p = png(w, h, idat, &n);
	CHECK(feed_figure(s, 0, p, n) == 0);
	free(p);
}

static char *text_of(const struct sb_display *d)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);
	sb_display_text(m, d);
	fclose(m);
	return buf;
}

static void test_png_check(void)
{
	size_t n;
	uint32_t w = 0, h = 0;
	char why[96];
	unsigned char *p = png(800, 600, 100, &n);
	CHECK(sb_png_check(p, n, &w, &h, why, sizeof why) == 0 && w == 800 && h == 600);
	/* every prefix is refused */
	for (size_t k = 0; k < n; k++)
		CHECK(sb_png_check(p, k, &w, &h, why, sizeof why) == -1);
	/* trailing bytes, a bad signature, zero width, a bad depth, a chunk
	 * running past the end, a type that is not letters */
	unsigned char *q = malloc(n + 1);
	memcpy(q, p, n);
	q[n] = 0;
	CHECK(sb_png_check(q, n + 1, &w, &h, why, sizeof why) == -1);
	free(q);
	p[1] = 'Q';
	CHECK(sb_png_check(p, n, &w, &h, why, sizeof why) == -1 && strstr(why, "signature"));
	p[1] = 'P';
	put32(p + 16, 0);
	CHECK(sb_png_check(p, n, &w, &h, why, sizeof why) == -1 && strstr(why, "dimensions"));
	put32(p + 16, 800);
	p[24] = 7;
	CHECK(sb_png_check(p, n, &w, &h, why, sizeof why) == -1 && strstr(why, "IHDR"));
	p[24] = 8;
	put32(p + 33, 0x7fffffff);
	CHECK(sb_png_check(p, n, &w, &h, why, sizeof why) == -1 && strstr(why, "longer"));
	put32(p + 33, 100);
	memcpy(p + 37, "ID1T", 4);
	CHECK(sb_png_check(p, n, &w, &h, why, sizeof why) == -1 && strstr(why, "letters"));
	free(p);
}

static void test_stream_keeps_valid_figures(void)
{
	struct sb_display d;
	struct sb_display_stream s;
	sb_display_init(&d);
	sb_display_stream_init(&s, &d, NULL);
	feed_png(&s, 640, 480, 1000);
	/* one byte at a time parses the same */
	size_t n, bn, rn;
	unsigned char *p = png(1024, 100, 500, &n), *b = figure_body(0, p, n, &bn), *r = record('D', 'p', b, bn, &rn);
	for (size_t i = 0; i < rn; i++)
		CHECK(sb_display_stream_feed(&s, (const char *)r + i, 1) == 0);
	sb_display_stream_end(&s);
	const struct sb_display_tally *t = &d.by_class[SB_DCLASS_FIGURE];
	CHECK(d.n == 2 && t->kept == 2 && t->seen == 2 && sb_display_dropped(&d, SB_DCLASS_FIGURE) == 0);
	CHECK(d.v[0].index == 1 && d.v[0].width == 640 && d.v[0].height == 480);
	CHECK(d.v[1].index == 2 && d.v[1].width == 1024 && d.v[1].len == n && !memcmp(d.v[1].data, p, n));
	CHECK(t->bytes == d.v[0].len + d.v[1].len);

	json_t *o = json_object();
	sb_display_to_json(&d, o);
	json_t *a = json_object_get(o, "figures");
	CHECK(json_array_size(a) == 2 && !json_object_get(o, "figures_not_shown"));
	CHECK(json_integer_value(json_object_get(json_array_get(a, 1), "width")) == 1024);
	CHECK(json_integer_value(json_object_get(json_array_get(a, 1), "bytes")) == (json_int_t)n);
	CHECK(!json_object_get(json_array_get(a, 1), "data")); /* never the bytes */
	json_decref(o);

	char *txt = text_of(&d);
	CHECK_STR_CONTAINS(txt, "[figure 1: 640×480 PNG]\n[figure 2: 1024×100 PNG]\n");
	free(txt);

	json_t *content = NULL;
	sb_display_content(&d, &content);
	CHECK(json_array_size(content) == 2);
	json_t *img = json_array_get(content, 0);
	CHECK(!strcmp(json_string_value(json_object_get(img, "type")), "image"));
	CHECK(!strcmp(json_string_value(json_object_get(img, "mimeType")), "image/png"));
	CHECK(!strncmp(json_string_value(json_object_get(img, "data")), "iVBORw0KGgo", 11));
	json_decref(content);
	free(p);
	free(b);
	free(r);
	sb_display_free(&d);
}

static void test_caps(void)
{
	const struct sb_display_caps *c = &sb_display_classes[SB_DCLASS_FIGURE].caps;
	const struct sb_display_tally *t;
	struct sb_display d;
	struct sb_display_stream s;
	sb_display_init(&d);
	sb_display_stream_init(&s, &d, NULL);
	/* 1: too big for one figure; 2..: under it, until the total is used */
	feed_png(&s, 100, 100, c->max_one_bytes + 1);
	size_t each = c->max_total_bytes * 2 / 5;
	for (int i = 0; i < 4; i++)
		feed_png(&s, 100, 100, each - 100);
	sb_display_stream_end(&s);
	t = &d.by_class[SB_DCLASS_FIGURE];
	CHECK(d.n == 2 && d.v[0].index == 2 && d.v[1].index == 3);
	CHECK(t->bytes <= c->max_total_bytes);
	CHECK(t->dropped[SB_DROP_TOO_BIG] == 1 && t->first_dropped[SB_DROP_TOO_BIG] == 1);
	CHECK(t->dropped[SB_DROP_OVER_TOTAL] == 2 && t->first_dropped[SB_DROP_OVER_TOTAL] == 4);
	char *txt = text_of(&d);
	CHECK_STR_CONTAINS(txt, "[figure 2: 100×100 PNG]\n[figure 3: 100×100 PNG]\n");
	CHECK_STR_CONTAINS(txt, "[figure 1 not shown: larger than 400 KiB even when scaled down]");
	CHECK_STR_CONTAINS(txt, "[2 figures not shown, the first is figure 4: a result carries at most 600 KiB of figures]");
	free(txt);
	sb_display_free(&d);

	/* The count, the long side, and the driver's own skip records. */
	sb_display_stream_init(&s, &d, NULL);
	feed_png(&s, sb_display_max_side + 1, 10, 10);
	for (unsigned i = 0; i < c->max_count + 2; i++)
		feed_png(&s, 10, 10, 10);
	CHECK(feed_record(&s, 'X', 'p', "c", 1) == 0);
	CHECK(feed_record(&s, 'X', 'p', "t", 1) == 0);
	sb_display_stream_end(&s);
	t = &d.by_class[SB_DCLASS_FIGURE];
	CHECK(d.n == c->max_count && t->seen == c->max_count + 5);
	CHECK(t->dropped[SB_DROP_INVALID] == 1 && strstr(t->invalid_why, "long-side"));
	CHECK(t->dropped[SB_DROP_OVER_COUNT] == 3 && t->first_dropped[SB_DROP_OVER_COUNT] == c->max_count + 2);
	CHECK(t->dropped[SB_DROP_OVER_TOTAL] == 1);
	json_t *o = json_object();
	sb_display_to_json(&d, o);
	CHECK(json_array_size(json_object_get(o, "figures_not_shown")) == 3);
	json_decref(o);
	sb_display_free(&d);
}

static void test_hostile_streams(void)
{
	struct sb_display d;
	struct sb_display_stream s;
	const struct sb_display_tally *t = &d.by_class[SB_DCLASS_FIGURE];

	/* A record claiming 4 GiB: counted as too big, its bytes skipped as
	 * they come, never buffered; the stream ends inside it. */
	sb_display_init(&d);
	sb_display_stream_init(&s, &d, NULL);
	unsigned char huge[6] = {0xff, 0xff, 0xff, 0xff, 'D', 'p'};
	CHECK(sb_display_stream_feed(&s, (const char *)huge, 6) == 0);
	char junk[4096];
	memset(junk, 'x', sizeof junk);
	for (int i = 0; i < 64; i++)
		CHECK(sb_display_stream_feed(&s, junk, sizeof junk) == 0);
	CHECK(s.buf == NULL);
	sb_display_stream_end(&s);
	CHECK(d.n == 0 && t->dropped[SB_DROP_TOO_BIG] == 1 && t->seen == 1);
	sb_display_free(&d);

	/* Garbage where a PNG should be, an unknown record, an empty record, a
	 * malformed skip, a skip with an unknown reason, a cut-off length. */
	sb_display_stream_init(&s, &d, NULL);
	feed_figure(&s, 0, (const unsigned char *)"GIF89a", 6);
	feed_record(&s, 'Q', 'a', "bc", 2);
	sb_display_stream_feed(&s, "\0\0\0\0", 4);
	feed_record(&s, 'X', 'p', "cc", 2);
	feed_record(&s, 'X', 'p', "?", 1);
	sb_display_stream_feed(&s, "\0\0", 2);
	sb_display_stream_end(&s);
	CHECK(d.n == 0 && t->seen == 6 && t->dropped[SB_DROP_INVALID] == 6);
	CHECK(strstr(t->invalid_why, "signature") != NULL);
	char *txt = text_of(&d);
	CHECK_STR_CONTAINS(txt, "[6 figures not shown, the first is figure 1: not a PNG the host accepts (no PNG signature)]");
	free(txt);
	sb_display_free(&d);

	/* A figure record too short for its saved number. */
	sb_display_stream_init(&s, &d, NULL);
	feed_record(&s, 'D', 'p', "\0\0", 2);
	sb_display_stream_end(&s);
	CHECK(d.n == 0 && t->dropped[SB_DROP_INVALID] == 1 && strstr(t->invalid_why, "too short"));
	sb_display_free(&d);
}

/* A session's saved figures: N names /work/figure-N.png (the host writes
 * the name from the number); refused outside a session, or with a number
 * past the highest a session gives. */
static void test_saved_figures(void)
{
	size_t n;
	unsigned char *p = png(40, 30, 10, &n);
	struct sb_display d;
	struct sb_display_stream s;
	const struct sb_display_tally *t = &d.by_class[SB_DCLASS_FIGURE];
	sb_display_init(&d);
	sb_display_stream_init(&s, &d, "/work");
	CHECK(feed_figure(&s, 7, p, n) == 0);
	CHECK(feed_figure(&s, 1000000000, p, n) == 0);
	sb_display_stream_end(&s);
	CHECK(d.n == 1 && d.v[0].width == 40 && d.v[0].len == n && !memcmp(d.v[0].data, p, n));
	CHECK(d.v[0].saved_path && !strcmp(d.v[0].saved_path, "/work/figure-7.png"));
	CHECK(t->dropped[SB_DROP_INVALID] == 1 && strstr(t->invalid_why, "saved-figure number"));
	char *txt = text_of(&d);
	CHECK_STR_CONTAINS(txt, "[figure 1: 40×30 PNG, saved as /work/figure-7.png]");
	free(txt);
	json_t *o = json_object();
	sb_display_to_json(&d, o);
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(json_object_get(o, "figures"), 0), "saved_path")),
		      "/work/figure-7.png"));
	json_decref(o);
	sb_display_free(&d);

	/* not a session */
	sb_display_stream_init(&s, &d, NULL);
	CHECK(feed_figure(&s, 7, p, n) == 0);
	sb_display_stream_end(&s);
	CHECK(d.n == 0 && t->dropped[SB_DROP_INVALID] == 1 && strstr(t->invalid_why, "outside a session"));
	sb_display_free(&d);
	free(p);
}

/* Display items in order with the figures, a 3D scene joined to the PNG of
 * the next record, the items' own caps and numbers, what the host refuses,
 * the text lines and the result's "display". */
static void test_display_items(void)
{
	struct sb_display d;
	struct sb_display_stream s;
	const struct sb_display_tally *items = &d.by_class[SB_DCLASS_ITEM], *figs = &d.by_class[SB_DCLASS_FIGURE];
	size_t n;
	unsigned char *p = png(40, 30, 10, &n);
	sb_display_init(&d);
	sb_display_stream_init(&s, &d, NULL);
	CHECK(feed_record(&s, 'D', 't', "1/2", 3) == 0);
	CHECK(feed_record(&s, 'D', 'l', "\\frac{1}{2}", 11) == 0);
	CHECK(feed_figure(&s, 0, p, n) == 0);
	CHECK(feed_record(&s, 'D', 'j', "{\"bounds\":[1]}", 14) == 0);
	CHECK(feed_figure(&s, 0, p, n) == 0);
	CHECK(feed_record(&s, 'D', 'h', "<b>x</b>", 8) == 0);
	CHECK(feed_record(&s, 'D', 'j', "{\"a\":1}", 7) == 0);  /* no PNG follows */
	CHECK(feed_record(&s, 'D', 's', "<svg/>", 6) == 0);
	CHECK(feed_figure(&s, 0, p, n) == 0);                  /* not the scene's: a PNG item */
	CHECK(feed_record(&s, 'D', 'j', "[1]", 3) == 0);        /* not an object */
	CHECK(feed_record(&s, 'D', 't', "\xff", 1) == 0);       /* not UTF-8 */
	CHECK(feed_record(&s, 'D', 'q', "", 0) == 0);           /* unknown kind */
	CHECK(feed_record(&s, 'X', 't', "c", 1) == 0);
	sb_display_stream_end(&s);
	CHECK(figs->kept == 3 && figs->seen == 3);
	CHECK(items->seen == 10 && items->kept == 6 && d.n == 9);
	CHECK(items->dropped[SB_DROP_INVALID] == 3 && items->dropped[SB_DROP_OVER_COUNT] == 1);
	CHECK(items->first_dropped[SB_DROP_INVALID] == 7 && items->first_dropped[SB_DROP_OVER_COUNT] == 10);

	json_t *o = json_object();
	sb_display_to_json(&d, o);
	char *js = json_dumps(json_object_get(o, "display"), JSON_COMPACT);
	CHECK_STR_CONTAINS(js, "[{\"kind\":\"text\",\"text\":\"1/2\"},{\"kind\":\"latex\",\"latex\":"
			       "\"\\\\frac{1}{2}\"},{\"kind\":\"png\",\"mimeType\":\"image/png\",\"image\":0,");
	free(js);
	json_t *a = json_object_get(o, "display");
	CHECK(json_array_size(a) == 8);
	CHECK(json_integer_value(json_object_get(json_array_get(a, 2), "width")) == 40);
	json_t *scene = json_array_get(a, 3);
	CHECK(!strcmp(json_string_value(json_object_get(scene, "kind")), "threejs"));
	CHECK(json_integer_value(json_object_get(scene, "png")) == 1);
	CHECK(json_is_array(json_object_get(json_object_get(scene, "scene"), "bounds")));
	CHECK(json_object_get(json_array_get(a, 5), "png") == NULL);
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(a, 6), "svg")), "<svg/>"));
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(a, 7), "kind")), "png"));
	CHECK(json_integer_value(json_object_get(json_array_get(a, 7), "image")) == 2);
	CHECK(json_array_size(json_object_get(o, "figures")) == 3);
	CHECK(json_array_size(json_object_get(o, "display_not_shown")) == 2);
	json_decref(o);

	/* every figure is an image block, in order, the scene's picture too */
	json_t *content = NULL;
	sb_display_content(&d, &content);
	CHECK(json_array_size(content) == 3);
	json_decref(content);

	char *txt = text_of(&d);
	CHECK_STR_CONTAINS(txt, "$$ \\frac{1}{2} $$\n[figure 1: 40×30 PNG]\n[3D scene 3: an interactive three.js scene for "
				"viewers that render it; its picture follows]\n[figure 2: 40×30 PNG]\n[HTML 4:]\n<b>x</b>\n");
	CHECK_STR_CONTAINS(txt, "[SVG image 6: 6 bytes, shown by viewers that render SVG]\n[figure 3: 40×30 PNG]\n");
	CHECK_STR_CONTAINS(txt, "[3 display items not shown, the first is item 7: refused by the host (a 3D scene that is "
				"not a JSON object)]");
	CHECK_STR_CONTAINS(txt, "[display item 10 not shown: a result carries at most 32 display items]");
	CHECK(strstr(txt, "1/2\n") == NULL); /* a text item is in stdout already */
	free(txt);
	sb_display_free(&d);

	/* The host's caps, whatever the driver did. */
	const struct sb_display_caps *c = &sb_display_classes[SB_DCLASS_ITEM].caps;
	sb_display_stream_init(&s, &d, NULL);
	char *big = malloc(c->max_one_bytes + 1);
	memset(big, 'a', c->max_one_bytes + 1);
	CHECK(feed_record(&s, 'D', 'h', big, c->max_one_bytes + 1) == 0);
	for (unsigned i = 0; i < c->max_count + 1; i++)
		CHECK(feed_record(&s, 'D', 't', "x", 1) == 0);
	sb_display_stream_end(&s);
	CHECK(items->dropped[SB_DROP_TOO_BIG] == 1 && items->first_dropped[SB_DROP_TOO_BIG] == 1);
	CHECK(items->dropped[SB_DROP_OVER_COUNT] == 1 && items->kept == c->max_count);
	free(big);
	sb_display_free(&d);
	free(p);
}

/* The one table: every kind's byte and name found back, each in the caps
 * the driver gets, and in the output schema's enum. */
static void test_kinds_table(void)
{
	json_t *caps = sb_display_caps_json(), *props = json_object();
	sb_display_schema(props);
	json_t *names = json_object_get(json_object_get(json_object_get(json_object_get(props, "display"), "items"),
							"properties"), "kind");
	CHECK(json_array_size(json_object_get(names, "enum")) == sb_display_kinds_count);
	for (size_t i = 0; i < sb_display_kinds_count; i++) {
		const struct sb_display_kind *k = sb_display_kinds[i];
		CHECK(sb_display_kind_of(k->wire) == k && sb_display_kind_named(k->name) == k);
		json_t *row = json_object_get(json_object_get(caps, "kinds"), k->name);
		CHECK(json_array_size(row) == 2 && json_string_value(json_array_get(row, 0))[0] == (char)k->wire);
		const char *listed = json_string_value(json_array_get(json_object_get(names, "enum"), i));
		CHECK(listed && !strcmp(listed, k->name));
	}
	CHECK(json_integer_value(json_array_get(json_object_get(json_object_get(caps, "classes"), "figure"), 0)) == 8);
	CHECK(json_object_get(props, "figures") && json_object_get(props, "figures_not_shown") &&
	      json_object_get(props, "display_not_shown"));
	json_decref(caps);
	json_decref(props);
}

int main(void)
{
	test_kinds_table();
	test_display_items();
	test_saved_figures();
	test_png_check();
	test_stream_keeps_valid_figures();
	test_caps();
	test_hostile_streams();
	return check_summary();
}
