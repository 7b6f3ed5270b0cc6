/* core/interact: an interact's declaration as the sandbox sends it (hostile
 * ones refused, extra fields dropped) and a viewer's values against it:
 * every control type, inside and outside what it declares. */
#include <stdlib.h>

#include "check.h"
#include "core/display.h"
#include "core/display_out.h"
#include "core/interact.h"
#include "core/result.h"
#include "runner/display_stream.h"

#define ID "i0123456789abcdef"

static const char *DECL =
	"{\"id\":\"" ID "\",\"manual\":false,\"controls\":["
	"{\"name\":\"n\",\"label\":\"n\",\"type\":\"slider\",\"min\":1,\"max\":20,\"step\":1,\"default\":5},"
	"{\"name\":\"x\",\"label\":\"x\",\"type\":\"slider\",\"min\":0,\"max\":1,\"step\":0.1,\"default\":0.3},"
	"{\"name\":\"d\",\"label\":\"d\",\"type\":\"slider\",\"options\":[\"1/3\",\"2/3\"],\"default\":1},"
	"{\"name\":\"r\",\"label\":\"r\",\"type\":\"range_slider\",\"min\":5,\"max\":20,\"step\":1,\"default\":[9,16]},"
	"{\"name\":\"f\",\"label\":\"f\",\"type\":\"selector\",\"options\":[\"sin\",\"cos\"],\"buttons\":true,"
	"\"default\":0,\"onclick\":\"alert(1)\"},"
	"{\"name\":\"b\",\"label\":\"<b>b</b>\",\"type\":\"checkbox\",\"default\":true},"
	"{\"name\":\"t\",\"label\":\"t\",\"type\":\"input_box\",\"default\":\"x^2\",\"rows\":1,\"width\":80,"
	"\"evaluate\":true},"
	"{\"name\":\"g\",\"label\":\"g\",\"type\":\"input_grid\",\"rows\":1,\"cols\":2,\"width\":4,"
	"\"default\":[[\"1\",\"2\"]]},"
	"{\"name\":\"c\",\"label\":\"c\",\"type\":\"color_selector\",\"default\":\"#ffa500\",\"hide_box\":false},"
	"{\"name\":\"txt\",\"label\":\"\",\"type\":\"text_control\",\"text\":\"note\"}]}";

static json_t *decl(void)
{
	char why[256] = "";
	json_t *d = sb_interact_parse(DECL, strlen(DECL), why, sizeof why);
	if (!d)
		fprintf(stderr, "parse: %s\n", why);
	return d;
}

static int check(const json_t *d, const char *values, char *msg, size_t n)
{
	json_t *v = json_loads(values, JSON_ALLOW_NUL, NULL);
	int rc = sb_interact_check_values(d, v, msg, n);
	json_decref(v);
	return rc;
}

static void test_parse_keeps_only_declared_fields(void)
{
	json_t *d = decl();
	CHECK(d != NULL);
	if (!d)
		return;
	CHECK(!strcmp(json_string_value(json_object_get(d, "id")), ID));
	json_t *controls = json_object_get(d, "controls");
	CHECK(json_array_size(controls) == 10);
	json_t *f = json_array_get(controls, 4);
	CHECK(json_object_get(f, "onclick") == NULL && json_is_true(json_object_get(f, "buttons")));
	/* a label is text: the viewer shows it as text, whatever it says */
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(controls, 5), "label")), "<b>b</b>"));
	char *s = sb_interact_summary(d);
	CHECK_STR_CONTAINS(s, "n: slider 1..20 step 1, x: slider 0..1 step 0.1, d: slider 1/3|2/3,");
	CHECK_STR_CONTAINS(s, "f: selector sin|cos, b: checkbox");
	free(s);
	json_decref(d);
}

static void test_values_inside_pass(void)
{
	json_t *d = decl();
	char msg[512] = "";
	CHECK(check(d, "{}", msg, sizeof msg) == 0);
	CHECK(check(d,
		    "{\"n\":20,\"x\":0.30000000000000004,\"d\":0,\"r\":[5,5],\"f\":1,\"b\":false,\"t\":\"sin(x)\","
		    "\"g\":[[\"a\",\"\"]],\"c\":\"#00FF00\"}",
		    msg, sizeof msg) == 0);
	CHECK(check(d, "{\"n\":1.0,\"x\":1}", msg, sizeof msg) == 0);
	json_decref(d);
}

static void test_values_outside_are_refused_by_name(void)
{
	json_t *d = decl();
	char msg[512];
	struct {
		const char *values, *said;
	} bad[] = {
		{"{\"n\":21}", "control \"n\" (slider 1..20 step 1): 21 is outside 1..20"},
		{"{\"n\":0}", "0 is outside 1..20"},
		{"{\"n\":1.5}", "1.5 is not on its steps of 1 from 1"},
		{"{\"n\":\"3\"}", "must be a number"},
		{"{\"n\":true}", "must be a number"},
		{"{\"n\":null}", "must be a number"},
		{"{\"x\":0.35}", "is not on its steps"},
		{"{\"d\":2}", "control \"d\" (slider 1/3|2/3): must be an index from 0 to 1"},
		{"{\"d\":-1}", "must be an index"},
		{"{\"d\":0.0}", "must be an index"},
		{"{\"r\":[16,9]}", "its low end is above its high end"},
		{"{\"r\":[4,9]}", "4 is outside 5..20"},
		{"{\"r\":9}", "must be a pair [low, high]"},
		{"{\"f\":\"sin\"}", "control \"f\" (selector sin|cos): must be an index from 0 to 1"},
		{"{\"b\":1}", "must be true or false"},
		{"{\"t\":5}", "must be a string"},
		{"{\"t\":\"a\\u0000b\"}", "contains a NUL character"},
		{"{\"g\":[[\"1\"]]}", "must be 1 rows of 2 strings"},
		{"{\"g\":[[\"1\",2]]}", "must be a string"},
		{"{\"c\":\"red\"}", "must be a color \"#rrggbb\""},
		{"{\"c\":\"#12345g\"}", "must be a color"},
		{"{\"txt\":\"x\"}", "is text, not a control: leave it out"},
		{"{\"q\":1}", "interact " ID " has no control \"q\" (its controls: n, x, d, r, f, b, t, g, c, txt)"},
		{"[1]", "\"values\" must be an object"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		msg[0] = '\0';
		int rc = check(d, bad[i].values, msg, sizeof msg);
		CHECK(rc == -1);
		if (rc != -1 || !strstr(msg, bad[i].said))
			fprintf(stderr, "  %s -> %s (want %s)\n", bad[i].values, msg, bad[i].said);
		CHECK(strstr(msg, bad[i].said) != NULL);
	}
	/* the longest text an input box takes, and one more character */
	char *big = malloc(SB_INTERACT_MAX_TEXT + 32);
	snprintf(big, 16, "{\"t\":\"");
	memset(big + 6, 'y', SB_INTERACT_MAX_TEXT);
	strcpy(big + 6 + SB_INTERACT_MAX_TEXT, "\"}");
	CHECK(check(d, big, msg, sizeof msg) == 0);
	memmove(big + 7, big + 6, SB_INTERACT_MAX_TEXT + 3);
	big[6] = 'y';
	CHECK(check(d, big, msg, sizeof msg) == -1);
	CHECK(strstr(msg, "is 10001 characters long; the most is 10000") != NULL);
	free(big);
	json_decref(d);
}

static void test_hostile_declarations_are_refused(void)
{
	struct {
		const char *text, *said;
	} bad[] = {
		{"[]", "not a JSON object"},
		{"{\"id\":\"x\",\"controls\":[]}", "no id of the form"},
		{"{\"id\":\"i0123456789ABCDEF\",\"controls\":[]}", "no id of the form"},
		{"{\"id\":\"" ID "\",\"id\":\"" ID "\",\"controls\":[]}", "not a JSON object"},
		{"{\"id\":\"" ID "\",\"controls\":{}}", "\"controls\" is not a list"},
		{"{\"id\":\"" ID "\",\"manual\":1,\"controls\":[]}", "\"manual\" is not true or false"},
		{"{\"id\":\"" ID "\",\"controls\":[{\"name\":\"a b\",\"label\":\"\",\"type\":\"checkbox\",\"default\":true}]}",
		 "control 1 has no name"},
		{"{\"id\":\"" ID "\",\"controls\":[{\"name\":\"a\",\"label\":\"\",\"type\":\"checkbox\",\"default\":true},"
		 "{\"name\":\"a\",\"label\":\"\",\"type\":\"checkbox\",\"default\":true}]}",
		 "control 2: a second control named a"},
		{"{\"id\":\"" ID "\",\"controls\":[{\"name\":\"a\",\"label\":\"\",\"type\":\"script\",\"default\":1}]}",
		 "control 1 (a): an unknown type"},
		{"{\"id\":\"" ID "\",\"controls\":[{\"name\":\"a\",\"label\":\"\",\"type\":\"slider\",\"min\":0,\"max\":1,"
		 "\"step\":0,\"default\":0}]}",
		 "its step is not positive"},
		{"{\"id\":\"" ID "\",\"controls\":[{\"name\":\"a\",\"label\":\"\",\"type\":\"slider\",\"min\":2,\"max\":1,"
		 "\"step\":1,\"default\":2}]}",
		 "its maximum is below its minimum"},
		{"{\"id\":\"" ID "\",\"controls\":[{\"name\":\"a\",\"label\":\"\",\"type\":\"slider\",\"min\":0,\"max\":1,"
		 "\"step\":1,\"default\":7}]}",
		 "control 1 (a): its default 7 is outside 0..1"},
		{"{\"id\":\"" ID "\",\"controls\":[{\"name\":\"a\",\"label\":\"\",\"type\":\"selector\",\"options\":[],"
		 "\"buttons\":false,\"default\":0}]}",
		 "\"options\" must be 1 to 1000 labels"},
		{"{\"id\":\"" ID "\",\"controls\":[{\"name\":\"a\",\"label\":\"\",\"type\":\"selector\",\"options\":[1],"
		 "\"buttons\":false,\"default\":0}]}",
		 "option 0 is not a label"},
		{"{\"id\":\"" ID "\",\"controls\":[{\"name\":\"a\",\"label\":\"\",\"type\":\"input_grid\",\"rows\":40,"
		 "\"cols\":40,\"width\":4,\"default\":[]}]}",
		 "an input grid has at most 400 cells"},
		{"{\"id\":\"" ID "\",\"controls\":[{\"name\":\"a\",\"type\":\"checkbox\",\"default\":true}]}",
		 "no label of at most 200 characters"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char why[256] = "";
		json_t *d = sb_interact_parse(bad[i].text, strlen(bad[i].text), why, sizeof why);
		CHECK(d == NULL);
		if (d || !strstr(why, bad[i].said))
			fprintf(stderr, "  %s -> %s (want %s)\n", bad[i].text, why, bad[i].said);
		CHECK(strstr(why, bad[i].said) != NULL);
		json_decref(d);
	}
	CHECK(sb_interact_id_ok(ID) && !sb_interact_id_ok("i0123") && !sb_interact_id_ok(NULL));
}

/* ---- the "interact" display kind, through the display stream */

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void feed(struct sb_display_stream *s, char type, char kind, const void *body, size_t n)
{
	unsigned char *r = malloc(6 + n);
	put32(r, (uint32_t)(2 + n));
	r[4] = (unsigned char)type;
	r[5] = (unsigned char)kind;
	if (n)
		memcpy(r + 6, body, n);
	CHECK(sb_display_stream_feed(s, (const char *)r, 6 + n) == 0);
	free(r);
}

/* A figure record: its saved number 0, then a PNG of the right shape. */
static void feed_png(struct sb_display_stream *s)
{
	unsigned char p[4 + 57] = {0};
	unsigned char *q = p + 4;
	memcpy(q, "\x89PNG\r\n\x1a\n", 8);
	put32(q + 8, 13);
	memcpy(q + 12, "IHDR", 4);
	put32(q + 16, 4);
	put32(q + 20, 3);
	q[24] = 8;
	q[25] = 6;
	put32(q + 33, 0);
	memcpy(q + 37, "IDAT", 4);
	put32(q + 45, 0);
	memcpy(q + 49, "IEND", 4);
	feed(s, 'D', 'p', p, sizeof p);
}

static const char *SMALL = "{\"id\":\"i00000000000000aa\",\"manual\":false,\"controls\":[{\"name\":\"n\",\"label\":\"n\","
			   "\"type\":\"slider\",\"min\":1,\"max\":20,\"step\":1,\"default\":5}]}";

static void test_kind_groups_its_rendering(void)
{
	for (int in_session = 0; in_session < 2; in_session++) {
		struct sb_result r;
		sb_result_init(&r);
		struct sb_display_stream s;
		sb_display_stream_init(&s, &r.display, in_session ? "/work" : NULL);
		if (in_session)
			snprintf(r.display.session, sizeof r.display.session, "s_0123");
		feed(&s, 'D', 't', "before", 6);
		feed(&s, 'D', 'i', SMALL, strlen(SMALL));
		feed(&s, 'D', 't', "n=5", 3);
		feed_png(&s);
		feed(&s, 'D', 'i', SMALL, strlen(SMALL)); /* one inside another: refused */
		feed(&s, 'E', 'i', NULL, 0);
		feed(&s, 'E', 'i', NULL, 0); /* none open: nothing */
		feed(&s, 'E', 't', NULL, 0); /* not a kind with items of its own */
		feed(&s, 'D', 't', "after", 5);
		sb_display_stream_end(&s);
		json_t *o = sb_result_to_json(&r);
		json_t *d = json_object_get(o, "display");
		CHECK(json_array_size(d) == 3);
		json_t *it = json_array_get(d, 1);
		CHECK(!strcmp(json_string_value(json_object_get(it, "kind")), "interact"));
		CHECK(!strcmp(json_string_value(json_object_get(it, "id")), "i00000000000000aa"));
		json_t *items = json_object_get(it, "items");
		CHECK(json_array_size(items) == 2);
		CHECK(!strcmp(json_string_value(json_object_get(json_array_get(items, 0), "text")), "n=5"));
		CHECK(!strcmp(json_string_value(json_object_get(json_array_get(items, 1), "kind")), "png"));
		CHECK(json_integer_value(json_object_get(json_array_get(items, 1), "image")) == 0);
		CHECK(!strcmp(json_string_value(json_object_get(json_array_get(d, 2), "text")), "after"));
		if (in_session) {
			CHECK(!strcmp(json_string_value(json_object_get(it, "session_id")), "s_0123"));
			CHECK(!json_object_get(it, "note"));
		} else {
			CHECK(!json_object_get(it, "session_id"));
			CHECK(strstr(json_string_value(json_object_get(it, "note")), "The controls need a session") != NULL);
		}
		/* the nested one and the malformed end: refused, named */
		json_t *ns = json_object_get(o, "display_not_shown");
		CHECK(json_array_size(ns) == 1);
		CHECK(json_integer_value(json_object_get(json_array_get(ns, 0), "count")) == 2);
		CHECK(strstr(json_string_value(json_object_get(json_array_get(ns, 0), "message")),
			     "one interact inside another") != NULL);
		/* the model's lines: the controls, then the rendering's */
		char *text = NULL;
		size_t tn = 0;
		FILE *f = open_memstream(&text, &tn);
		sb_display_text(f, &r.display);
		fclose(f);
		CHECK(strstr(text, in_session ? "[interact 2 (i00000000000000aa): n: slider 1..20 step 1. Viewers that"
					      : "[interact 2: n: slider 1..20 step 1. Its controls need a session") != NULL);
		CHECK(strstr(text, "[figure 1: 4×3 PNG]") > strstr(text, "[interact 2"));
		free(text);
		json_t *decls = sb_result_interacts(&r);
		CHECK(json_array_size(decls) == 1 &&
		      !strcmp(json_string_value(json_object_get(json_array_get(decls, 0), "id")), "i00000000000000aa"));
		json_decref(decls);
		json_decref(o);
		sb_result_free(&r);
	}
	/* A hostile declaration: refused as an item, and what follows is the
	 * result's own. */
	struct sb_display d;
	sb_display_init(&d);
	struct sb_display_stream s;
	sb_display_stream_init(&s, &d, NULL);
	const char *bad = "{\"id\":\"i00000000000000aa\",\"controls\":[{\"name\":\"n\",\"label\":\"<img src=x>\","
			  "\"type\":\"script\"}]}";
	feed(&s, 'D', 'i', bad, strlen(bad));
	feed(&s, 'D', 't', "x", 1);
	feed(&s, 'E', 'i', NULL, 0);
	sb_display_stream_end(&s);
	CHECK(d.n == 1 && d.v[0].group == -1);
	CHECK(strstr(d.by_class[SB_DCLASS_ITEM].invalid_why, "an interact whose declaration is wrong") != NULL);
	sb_display_free(&d);
}

int main(void)
{
	test_kind_groups_its_rendering();
	test_parse_keeps_only_declared_fields();
	test_values_inside_pass();
	test_values_outside_are_refused_by_name();
	test_hostile_declarations_are_refused();
	return check_summary();
}
