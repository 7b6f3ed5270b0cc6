/* The host's side of figures: the PNG shape check, the figure stream's
 * records and caps (whatever bytes the sandbox sends), the text lines and
 * the result's metadata. */
#include <stdlib.h>

#include "check.h"
#include "core/figure.h"
#include "runner/figstream.h"
#include "tools/figures.h"
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

/* One record of the figure stream: length, kind, body. */
static unsigned char *record(char kind, const void *body, size_t n, size_t *len)
{
	*len = 4 + 1 + n;
	unsigned char *r = malloc(*len);
	put32(r, (uint32_t)(1 + n));
	r[4] = (unsigned char)kind;
	if (n)
		memcpy(r + 5, body, n);
	return r;
}

/* One record of that kind and body into the stream: what feed returns. */
static int feed_record(struct sb_figstream *s, char kind, const void *body, size_t n)
{
	size_t rn;
	unsigned char *r = record(kind, body, n, &rn);
	int rc = sb_figstream_feed(s, (const char *)r, rn);
	free(r);
	return rc;
}

static void feed_png(struct sb_figstream *s, uint32_t w, uint32_t h, size_t idat)
{
	size_t n;
	unsigned char *p = png(w, h, idat, &n);
	CHECK(feed_record(s, 'P', p, n) == 0);
	free(p);
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
	struct sb_figures f = {0};
	struct sb_figstream s;
	sb_figstream_init(&s, &f);
	feed_png(&s, 640, 480, 1000);
	/* one byte at a time parses the same */
	size_t n, rn;
	unsigned char *p = png(1024, 100, 500, &n), *r = record('P', p, n, &rn);
	for (size_t i = 0; i < rn; i++)
		CHECK(sb_figstream_feed(&s, (const char *)r + i, 1) == 0);
	sb_figstream_end(&s);
	CHECK(f.n == 2 && f.seen == 2 && sb_figures_dropped(&f) == 0);
	CHECK(f.v[0].index == 1 && f.v[0].width == 640 && f.v[0].height == 480);
	CHECK(f.v[1].index == 2 && f.v[1].width == 1024 && f.v[1].len == n && !memcmp(f.v[1].png, p, n));
	CHECK(f.total_bytes == f.v[0].len + f.v[1].len);

	json_t *o = json_object();
	sb_figures_to_json(&f, o);
	json_t *a = json_object_get(o, "figures");
	CHECK(json_array_size(a) == 2 && !json_object_get(o, "figures_not_shown"));
	CHECK(json_integer_value(json_object_get(json_array_get(a, 1), "width")) == 1024);
	CHECK(json_integer_value(json_object_get(json_array_get(a, 1), "bytes")) == (json_int_t)n);
	CHECK(!json_object_get(json_array_get(a, 1), "data")); /* never the bytes */
	json_decref(o);

	char line[200];
	sb_figure_line(line, sizeof line, &f.v[0], NULL);
	CHECK(!strcmp(line, "[figure 1: 640×480 PNG]"));
	sb_figure_line(line, sizeof line, &f.v[0], "/work/figure-1.png");
	CHECK(!strcmp(line, "[figure 1: 640×480 PNG, saved as /work/figure-1.png]"));

	struct sb_tool_result tr = {0};
	sb_tool_result_figures(&tr, &f);
	CHECK(json_array_size(tr.content) == 2);
	json_t *img = json_array_get(tr.content, 0);
	CHECK(!strcmp(json_string_value(json_object_get(img, "type")), "image"));
	CHECK(!strcmp(json_string_value(json_object_get(img, "mimeType")), "image/png"));
	CHECK(!strncmp(json_string_value(json_object_get(img, "data")), "iVBORw0KGgo", 11));
	sb_tool_result_free(&tr);
	free(p);
	free(r);
	sb_figures_free(&f);
}

static char *text_of(const struct sb_figures *f)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);
	sb_figures_text(m, f);
	fclose(m);
	return buf;
}

static void test_caps(void)
{
	const struct sb_figure_caps *c = &sb_figure_caps;
	struct sb_figures f = {0};
	struct sb_figstream s;
	sb_figstream_init(&s, &f);
	/* 1: too big for one figure; 2..: under it, until the total is used */
	feed_png(&s, 100, 100, c->max_image_bytes + 1);
	size_t each = c->max_total_bytes * 2 / 5;
	for (int i = 0; i < 4; i++)
		feed_png(&s, 100, 100, each - 100);
	sb_figstream_end(&s);
	CHECK(f.n == 2 && f.v[0].index == 2 && f.v[1].index == 3);
	CHECK(f.total_bytes <= c->max_total_bytes);
	CHECK(f.dropped[SB_FIG_TOO_BIG] == 1 && f.first_dropped[SB_FIG_TOO_BIG] == 1);
	CHECK(f.dropped[SB_FIG_OVER_TOTAL] == 2 && f.first_dropped[SB_FIG_OVER_TOTAL] == 4);
	char *t = text_of(&f);
	CHECK_STR_CONTAINS(t, "[figure 2: 100×100 PNG]\n[figure 3: 100×100 PNG]\n");
	CHECK_STR_CONTAINS(t, "[figure 1 not shown: larger than 400 KiB even when scaled down]");
	CHECK_STR_CONTAINS(t, "[2 figures not shown, the first is figure 4: a result carries at most 600 KiB of figures]");
	free(t);
	sb_figures_free(&f);

	/* The count, the long side, and the driver's own skip records. */
	sb_figstream_init(&s, &f);
	feed_png(&s, c->max_side + 1, 10, 10);
	for (unsigned i = 0; i < c->max_count + 2; i++)
		feed_png(&s, 10, 10, 10);
	CHECK(feed_record(&s, 'S', "c", 1) == 0);
	CHECK(feed_record(&s, 'S', "t", 1) == 0);
	sb_figstream_end(&s);
	CHECK(f.n == c->max_count && f.seen == c->max_count + 5);
	CHECK(f.dropped[SB_FIG_INVALID] == 1 && strstr(f.invalid_why, "long-side"));
	CHECK(f.dropped[SB_FIG_OVER_COUNT] == 3 && f.first_dropped[SB_FIG_OVER_COUNT] == c->max_count + 2);
	CHECK(f.dropped[SB_FIG_OVER_TOTAL] == 1);
	json_t *o = json_object();
	sb_figures_to_json(&f, o);
	CHECK(json_array_size(json_object_get(o, "figures_not_shown")) == 3);
	json_decref(o);
	sb_figures_free(&f);
}

static void test_hostile_streams(void)
{
	struct sb_figures f = {0};
	struct sb_figstream s;

	/* A record claiming 4 GiB: counted as too big, its bytes skipped as
	 * they come, never buffered; the stream ends inside it. */
	sb_figstream_init(&s, &f);
	unsigned char huge[5] = {0xff, 0xff, 0xff, 0xff, 'P'};
	CHECK(sb_figstream_feed(&s, (const char *)huge, 5) == 0);
	char junk[4096];
	memset(junk, 'x', sizeof junk);
	for (int i = 0; i < 64; i++)
		CHECK(sb_figstream_feed(&s, junk, sizeof junk) == 0);
	CHECK(s.png == NULL);
	sb_figstream_end(&s);
	CHECK(f.n == 0 && f.dropped[SB_FIG_TOO_BIG] == 1 && f.seen == 1);
	sb_figures_free(&f);

	/* Garbage where a PNG should be, an unknown kind, an empty record, a
	 * malformed skip, a skip with an unknown reason, a cut-off length. */
	sb_figstream_init(&s, &f);
	feed_record(&s, 'P', "GIF89a", 6);
	feed_record(&s, 'Q', "abc", 3);
	sb_figstream_feed(&s, "\0\0\0\0", 4);
	feed_record(&s, 'S', "cc", 2);
	feed_record(&s, 'S', "?", 1);
	sb_figstream_feed(&s, "\0\0", 2);
	sb_figstream_end(&s);
	CHECK(f.n == 0 && f.seen == 6 && f.dropped[SB_FIG_INVALID] == 6);
	CHECK(strstr(f.invalid_why, "signature") != NULL);
	char *t = text_of(&f);
	CHECK_STR_CONTAINS(t, "[6 figures not shown, the first is figure 1: not a PNG the host accepts (no PNG signature)]");
	free(t);
	sb_figures_free(&f);
}

/* A session's saved figures: 'F' N PNG names /work/figure-N.png (the host
 * writes the name from the number); refused outside a session, or with a
 * number 0. */
static void test_saved_figures(void)
{
	size_t n, rn;
	unsigned char *p = png(40, 30, 10, &n);
	unsigned char *body = malloc(4 + n);
	put32(body, 7);
	memcpy(body + 4, p, n);
	unsigned char *r = record('F', body, 4 + n, &rn);

	struct sb_figures f = {0};
	struct sb_figstream s;
	sb_figstream_init(&s, &f);
	s.saved_dir = "/work";
	CHECK(sb_figstream_feed(&s, (const char *)r, rn) == 0);
	put32(body, 0);
	unsigned char *r0 = record('F', body, 4 + n, &rn);
	CHECK(sb_figstream_feed(&s, (const char *)r0, rn) == 0);
	sb_figstream_end(&s);
	CHECK(f.n == 1 && f.v[0].width == 40 && f.v[0].len == n && !memcmp(f.v[0].png, p, n));
	CHECK(f.v[0].saved_path && !strcmp(f.v[0].saved_path, "/work/figure-7.png"));
	CHECK(f.dropped[SB_FIG_INVALID] == 1);
	char *t = text_of(&f);
	CHECK_STR_CONTAINS(t, "[figure 1: 40×30 PNG, saved as /work/figure-7.png]");
	free(t);
	sb_figures_free(&f);

	/* not a session */
	sb_figstream_init(&s, &f);
	CHECK(sb_figstream_feed(&s, (const char *)r, rn) == 0);
	sb_figstream_end(&s);
	CHECK(f.n == 0 && f.dropped[SB_FIG_INVALID] == 1 && strstr(f.invalid_why, "outside a session"));
	sb_figures_free(&f);
	free(r0);
	free(r);
	free(body);
	free(p);
}

/* Display items (core/display.h): in order with the figures, a 3D scene
 * joined to the PNG of the next record, the items' own caps and numbers,
 * what the host refuses, the text lines and the result's "display". */
static void test_display_items(void)
{
	struct sb_figures f = {0};
	struct sb_figstream s;
	size_t n;
	unsigned char *p = png(40, 30, 10, &n);
	sb_figstream_init(&s, &f);
	CHECK(feed_record(&s, 'D', "t1/2", 4) == 0);
	CHECK(feed_record(&s, 'D', "l\\frac{1}{2}", 12) == 0);
	CHECK(feed_record(&s, 'P', p, n) == 0);
	CHECK(feed_record(&s, 'D', "j{\"bounds\":[1]}", 15) == 0);
	CHECK(feed_record(&s, 'P', p, n) == 0);
	CHECK(feed_record(&s, 'D', "h<b>x</b>", 9) == 0);
	CHECK(feed_record(&s, 'D', "j{\"a\":1}", 8) == 0);  /* no PNG follows */
	CHECK(feed_record(&s, 'D', "s<svg/>", 7) == 0);
	CHECK(feed_record(&s, 'P', p, n) == 0);                /* not the scene's: a PNG item */
	CHECK(feed_record(&s, 'D', "j[1]", 4) == 0);           /* not an object */
	CHECK(feed_record(&s, 'D', "t\xff", 2) == 0);          /* not UTF-8 */
	CHECK(feed_record(&s, 'D', "q", 1) == 0);              /* unknown kind */
	CHECK(feed_record(&s, 'X', "c", 1) == 0);
	sb_figstream_end(&s);
	CHECK(f.n == 3 && f.seen == 3);
	CHECK(f.display.seen == 10 && sb_display_items(&f.display) == 6 && f.display.n == 8);
	CHECK(f.display.dropped[SB_FIG_INVALID] == 3 && f.display.dropped[SB_FIG_OVER_COUNT] == 1);
	CHECK(f.display.first_dropped[SB_FIG_INVALID] == 7 && f.display.first_dropped[SB_FIG_OVER_COUNT] == 10);

	json_t *o = json_object();
	sb_figures_to_json(&f, o);
	char *js = json_dumps(json_object_get(o, "display"), JSON_COMPACT);
	CHECK_STR_CONTAINS(js, "[{\"kind\":\"text\",\"text\":\"1/2\"},{\"kind\":\"latex\",\"latex\":"
			       "\"\\\\frac{1}{2}\"},{\"kind\":\"png\",\"mimeType\":\"image/png\",\"image\":0,");
	free(js);
	json_t *d = json_object_get(o, "display");
	CHECK(json_array_size(d) == 8);
	CHECK(json_integer_value(json_object_get(json_array_get(d, 2), "width")) == 40);
	json_t *scene = json_array_get(d, 3);
	CHECK(!strcmp(json_string_value(json_object_get(scene, "kind")), "threejs"));
	CHECK(json_integer_value(json_object_get(scene, "png")) == 1);
	CHECK(json_is_array(json_object_get(json_object_get(scene, "scene"), "bounds")));
	CHECK(json_object_get(json_array_get(d, 5), "png") == NULL);
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(d, 6), "svg")), "<svg/>"));
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(d, 7), "kind")), "png"));
	CHECK(json_array_size(json_object_get(o, "display_not_shown")) == 2);
	json_decref(o);

	char *t = text_of(&f);
	CHECK_STR_CONTAINS(t, "$$ \\frac{1}{2} $$\n[figure 1: 40×30 PNG]\n[3D scene 3: an interactive three.js scene for "
			      "viewers that render it; its picture follows]\n[figure 2: 40×30 PNG]\n[HTML 4:]\n<b>x</b>\n");
	CHECK_STR_CONTAINS(t, "[SVG image 6: 6 bytes, shown by viewers that render SVG]\n[figure 3: 40×30 PNG]\n");
	CHECK_STR_CONTAINS(t, "[3 display items not shown, the first is item 7: refused by the host (a 3D scene that is "
			      "not a JSON object)]");
	CHECK_STR_CONTAINS(t, "[display item 10 not shown: a result carries at most 32 display items]");
	CHECK(strstr(t, "1/2\n") == NULL); /* a text item is in stdout already */
	free(t);
	sb_figures_free(&f);

	/* The host's caps, whatever the driver did. */
	sb_figstream_init(&s, &f);
	char *big = malloc(sb_figure_caps.max_item_bytes + 2);
	memset(big, 'a', sb_figure_caps.max_item_bytes + 2);
	big[0] = 'h';
	CHECK(feed_record(&s, 'D', big, sb_figure_caps.max_item_bytes + 2) == 0);
	for (unsigned i = 0; i < sb_figure_caps.max_items + 1; i++)
		CHECK(feed_record(&s, 'D', "tx", 2) == 0);
	sb_figstream_end(&s);
	CHECK(f.display.dropped[SB_FIG_TOO_BIG] == 1 && f.display.first_dropped[SB_FIG_TOO_BIG] == 1);
	CHECK(f.display.dropped[SB_FIG_OVER_COUNT] == 1 && sb_display_items(&f.display) == sb_figure_caps.max_items);
	free(big);
	sb_figures_free(&f);
	free(p);
}

int main(void)
{
	test_display_items();
	test_saved_figures();
	test_png_check();
	test_stream_keeps_valid_figures();
	test_caps();
	test_hostile_streams();
	return check_summary();
}
