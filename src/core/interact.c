#include "core/interact.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/jsontext.h"
#include "util/utf8.h"

/* The slack a viewer's value may have at a slider's ends (relative to its
 * span) and off its grid (in steps): a range input computes min + k*step
 * in binary floating point. */
#define END_SLACK 1e-9
#define GRID_SLACK 1e-6

bool sb_interact_id_ok(const char *id)
{
	if (!id || strlen(id) != SB_INTERACT_ID_LEN || id[0] != 'i')
		return false;
	for (const char *p = id + 1; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

__attribute__((format(printf, 3, 4))) static int say(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* A string without NUL of at most max code points. */
static bool text_ok(const json_t *v, size_t max)
{
	const char *s = sb_json_text(v);
	return s && sb_utf8_count(s, json_string_length(v)) <= max;
}

static bool name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > SB_INTERACT_MAX_NAME || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_'))
			return false;
	return true;
}

static bool is_index(const json_t *v, size_t n)
{
	return json_is_integer(v) && json_integer_value(v) >= 0 && (size_t)json_integer_value(v) < n;
}

static bool is_color(const json_t *v)
{
	const char *s = sb_json_text(v);
	if (!s || strlen(s) != 7 || s[0] != '#')
		return false;
	for (int i = 1; i < 7; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || (s[i] >= 'A' && s[i] <= 'F')))
			return false;
	return true;
}

/* ---- a number on a slider's grid */

struct grid {
	double min, max, step;
};

static int on_grid(const struct grid *g, const json_t *v, char *why, size_t n)
{
	if (!json_is_number(v))
		return say(why, n, "must be a number");
	double x = json_number_value(v), span = g->max - g->min > g->step ? g->max - g->min : g->step;
	if (x < g->min - END_SLACK * span || x > g->max + END_SLACK * span)
		return say(why, n, "%.15g is outside %.15g..%.15g", x, g->min, g->max);
	double k = (x - g->min) / g->step;
	if (fabs(k - round(k)) > GRID_SLACK)
		return say(why, n, "%.15g is not on its steps of %.15g from %.15g", x, g->step, g->min);
	return 0;
}

/* One value (pair: [low, high], low <= high) of a slider over numbers. */
static int grid_value(const struct grid *g, bool pair, const json_t *v, char *why, size_t n)
{
	if (!pair)
		return on_grid(g, v, why, n);
	if (!json_is_array(v) || json_array_size(v) != 2)
		return say(why, n, "must be a pair [low, high]");
	for (size_t i = 0; i < 2; i++)
		if (on_grid(g, json_array_get(v, i), why, n))
			return -1;
	if (json_number_value(json_array_get(v, 0)) > json_number_value(json_array_get(v, 1)))
		return say(why, n, "its low end is above its high end");
	return 0;
}

/* One value of a slider over a list (an index, or a pair of them). */
static int index_value(size_t count, bool pair, const json_t *v, char *why, size_t n)
{
	if (!pair)
		return is_index(v, count) ? 0 : say(why, n, "must be an index from 0 to %zu", count - 1);
	if (!json_is_array(v) || json_array_size(v) != 2 || !is_index(json_array_get(v, 0), count) ||
	    !is_index(json_array_get(v, 1), count))
		return say(why, n, "must be a pair of indices from 0 to %zu", count - 1);
	if (json_integer_value(json_array_get(v, 0)) > json_integer_value(json_array_get(v, 1)))
		return say(why, n, "its low end is above its high end");
	return 0;
}

static int string_value(const json_t *v, size_t max, char *why, size_t n)
{
	if (!json_is_string(v))
		return say(why, n, "must be a string");
	if (sb_json_has_nul(v))
		return say(why, n, "contains a NUL character");
	size_t chars = sb_utf8_count(json_string_value(v), json_string_length(v));
	return chars <= max ? 0 : say(why, n, "is %zu characters long; the most is %zu", chars, max);
}

static int grid_cells(const json_t *v, size_t rows, size_t cols, char *why, size_t n)
{
	if (!json_is_array(v) || json_array_size(v) != rows)
		return say(why, n, "must be %zu rows of %zu strings", rows, cols);
	for (size_t i = 0; i < rows; i++) {
		const json_t *r = json_array_get(v, i);
		if (!json_is_array(r) || json_array_size(r) != cols)
			return say(why, n, "must be %zu rows of %zu strings", rows, cols);
		for (size_t j = 0; j < cols; j++)
			if (string_value(json_array_get(r, j), SB_INTERACT_MAX_CELL, why, n))
				return -1;
	}
	return 0;
}

/* ---- a control's value: the one check, used for a declaration's default
 * and for a viewer's value alike */

static size_t options_count(const json_t *c)
{
	return json_array_size(json_object_get(c, "options"));
}

static int control_value(const json_t *c, const json_t *v, char *why, size_t n)
{
	const char *type = json_string_value(json_object_get(c, "type"));
	bool pair = !strcmp(type, "range_slider");
	if (!strcmp(type, "slider") || pair) {
		if (json_object_get(c, "options"))
			return index_value(options_count(c), pair, v, why, n);
		struct grid g = {json_number_value(json_object_get(c, "min")), json_number_value(json_object_get(c, "max")),
				 json_number_value(json_object_get(c, "step"))};
		return grid_value(&g, pair, v, why, n);
	}
	if (!strcmp(type, "selector"))
		return index_value(options_count(c), false, v, why, n);
	if (!strcmp(type, "checkbox"))
		return json_is_boolean(v) ? 0 : say(why, n, "must be true or false");
	if (!strcmp(type, "input_box"))
		return string_value(v, SB_INTERACT_MAX_TEXT, why, n);
	if (!strcmp(type, "input_grid"))
		return grid_cells(v, (size_t)json_integer_value(json_object_get(c, "rows")),
				  (size_t)json_integer_value(json_object_get(c, "cols")), why, n);
	if (!strcmp(type, "color_selector"))
		return is_color(v) ? 0 : say(why, n, "must be a color \"#rrggbb\"");
	return say(why, n, "is text, not a control: leave it out");
}

/* ---- declarations: each type's fields, checked and copied */

static int copy_int(json_t *out, const json_t *in, const char *key, long long lo, long long hi, char *why, size_t n)
{
	const json_t *v = json_object_get(in, key);
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return say(why, n, "\"%s\" must be an integer from %lld to %lld", key, lo, hi);
	json_object_set(out, key, (json_t *)v);
	return 0;
}

static int copy_bool(json_t *out, const json_t *in, const char *key, char *why, size_t n)
{
	const json_t *v = json_object_get(in, key);
	if (!json_is_boolean(v))
		return say(why, n, "\"%s\" must be true or false", key);
	json_object_set(out, key, (json_t *)v);
	return 0;
}

static int copy_options(json_t *out, const json_t *in, char *why, size_t n)
{
	const json_t *o = json_object_get(in, "options");
	if (!json_is_array(o) || json_array_size(o) == 0 || json_array_size(o) > SB_INTERACT_MAX_OPTIONS)
		return say(why, n, "\"options\" must be 1 to %d labels", SB_INTERACT_MAX_OPTIONS);
	size_t i;
	const json_t *x;
	json_array_foreach(o, i, x)
		if (!text_ok(x, SB_INTERACT_MAX_LABEL))
			return say(why, n, "option %zu is not a label of at most %d characters", i, SB_INTERACT_MAX_LABEL);
	json_object_set_new(out, "options", json_deep_copy(o));
	return 0;
}

static int copy_grid(json_t *out, const json_t *in, char *why, size_t n)
{
	const char *k[] = {"min", "max", "step"};
	for (int i = 0; i < 3; i++)
		if (!json_is_number(json_object_get(in, k[i])))
			return say(why, n, "\"%s\" must be a number", k[i]);
	double min = json_number_value(json_object_get(in, "min")), max = json_number_value(json_object_get(in, "max")),
	       step = json_number_value(json_object_get(in, "step"));
	if (!(step > 0))
		return say(why, n, "its step is not positive");
	if (max < min)
		return say(why, n, "its maximum is below its minimum");
	for (int i = 0; i < 3; i++)
		json_object_set(out, k[i], json_object_get(in, k[i]));
	return 0;
}

static int declare_fields(json_t *out, const json_t *in, const char *type, char *why, size_t n)
{
	if (!strcmp(type, "slider") || !strcmp(type, "range_slider"))
		return json_object_get(in, "options") ? copy_options(out, in, why, n) : copy_grid(out, in, why, n);
	if (!strcmp(type, "selector"))
		return copy_options(out, in, why, n) || copy_bool(out, in, "buttons", why, n) ? -1 : 0;
	if (!strcmp(type, "checkbox"))
		return 0;
	if (!strcmp(type, "input_box"))
		return copy_int(out, in, "rows", 1, 50, why, n) || copy_int(out, in, "width", 1, 200, why, n) ||
			       copy_bool(out, in, "evaluate", why, n)
			       ? -1
			       : 0;
	if (!strcmp(type, "input_grid"))
		return copy_int(out, in, "rows", 1, SB_INTERACT_MAX_CELLS, why, n) ||
			       copy_int(out, in, "cols", 1, SB_INTERACT_MAX_CELLS, why, n) ||
			       copy_int(out, in, "width", 1, 40, why, n) ||
			       json_integer_value(json_object_get(in, "rows")) * json_integer_value(json_object_get(in, "cols")) >
				       SB_INTERACT_MAX_CELLS
			       ? say(why, n, "an input grid has at most %d cells", SB_INTERACT_MAX_CELLS)
			       : 0;
	if (!strcmp(type, "color_selector"))
		return copy_bool(out, in, "hide_box", why, n);
	if (!strcmp(type, "text_control")) {
		if (!text_ok(json_object_get(in, "text"), SB_INTERACT_MAX_TEXT))
			return say(why, n, "\"text\" must be a string of at most %d characters", SB_INTERACT_MAX_TEXT);
		json_object_set(out, "text", json_object_get(in, "text"));
		return 0;
	}
	return say(why, n, "an unknown type");
}

static json_t *declare_control(const json_t *in, size_t i, const json_t *seen, char *why, size_t n)
{
	char w[200] = "";
	const char *name = sb_json_text(json_object_get(in, "name")), *type = sb_json_text(json_object_get(in, "type"));
	if (!json_is_object(in) || !name_ok(name)) {
		say(why, n, "control %zu has no name that is an identifier of at most %d characters", i + 1,
		    SB_INTERACT_MAX_NAME);
		return NULL;
	}
	if (json_object_get(seen, name)) {
		say(why, n, "control %zu: a second control named %s", i + 1, name);
		return NULL;
	}
	json_t *out = json_pack("{s:s, s:s}", "name", name, "type", type ? type : "");
	if (!type || !text_ok(json_object_get(in, "label"), SB_INTERACT_MAX_LABEL))
		say(w, sizeof w, type ? "no label of at most %d characters" : "no type", SB_INTERACT_MAX_LABEL);
	else if (!declare_fields(out, in, type, w, sizeof w) && strcmp(type, "text_control")) {
		json_t *d = json_object_get(in, "default");
		char dw[160];
		if (control_value(out, d, dw, sizeof dw) == 0)
			json_object_set(out, "default", d);
		else
			snprintf(w, sizeof w, "its default %s", dw);
	}
	if (w[0]) {
		say(why, n, "control %zu (%s): %s", i + 1, name, w);
		json_decref(out);
		return NULL;
	}
	json_object_set(out, "label", json_object_get(in, "label"));
	return out;
}

json_t *sb_interact_parse(const char *text, size_t len, char *why, size_t n)
{
	json_t *in = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	json_t *out = NULL, *controls = json_object_get(in, "controls"), *seen = json_object();
	const json_t *manual = json_object_get(in, "manual");
	if (!json_is_object(in))
		say(why, n, "not a JSON object");
	else if (!sb_interact_id_ok(sb_json_text(json_object_get(in, "id"))))
		say(why, n, "no id of the form i + 16 hex digits");
	else if (manual && !json_is_boolean(manual))
		say(why, n, "\"manual\" is not true or false");
	else if (!json_is_array(controls) || json_array_size(controls) > SB_INTERACT_MAX_CONTROLS)
		say(why, n, "\"controls\" is not a list of at most %d controls", SB_INTERACT_MAX_CONTROLS);
	else {
		json_t *list = json_array();
		size_t i;
		json_t *c;
		json_array_foreach(controls, i, c) {
			json_t *d = declare_control(c, i, seen, why, n);
			if (!d)
				break;
			json_object_set_new(seen, json_string_value(json_object_get(d, "name")), json_true());
			json_array_append_new(list, d);
		}
		if (json_array_size(list) == json_array_size(controls))
			out = json_pack("{s:O, s:b, s:o}", "id", json_object_get(in, "id"), "manual", json_is_true(manual),
					"controls", list);
		else
			json_decref(list);
	}
	json_decref(seen);
	json_decref(in);
	return out;
}

/* "slider 1..20 step 1", "selector sin|cos", "checkbox": a control in a few words. */
static void describe(struct sb_buf *b, const json_t *c)
{
	const char *type = json_string_value(json_object_get(c, "type"));
	const json_t *opts = json_object_get(c, "options");
	sb_buf_printf(b, "%s", type);
	if (opts) {
		size_t i;
		const json_t *o;
		json_array_foreach(opts, i, o) {
			if (i == 6) {
				sb_buf_printf(b, "|... (%zu)", json_array_size(opts));
				break;
			}
			sb_buf_printf(b, "%s%.40s", i ? "|" : " ", json_string_value(o));
		}
	} else if (json_object_get(c, "min")) {
		sb_buf_printf(b, " %.15g..%.15g step %.15g", json_number_value(json_object_get(c, "min")),
			      json_number_value(json_object_get(c, "max")), json_number_value(json_object_get(c, "step")));
	}
}

int sb_interact_check_values(const json_t *decl, const json_t *values, char *msg, size_t n)
{
	if (!json_is_object(values))
		return say(msg, n, "\"values\" must be an object {control name: value}");
	const json_t *controls = json_object_get(decl, "controls");
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)values, key, v) {
		const json_t *c = NULL, *x;
		size_t i;
		json_array_foreach(controls, i, x)
			if (!strcmp(json_string_value(json_object_get(x, "name")), key))
				c = x;
		if (!c) {
			SB_AUTO_BUF names = {0};
			json_array_foreach(controls, i, x)
				sb_buf_printf(&names, "%s%s", i ? ", " : "", json_string_value(json_object_get(x, "name")));
			return say(msg, n, "interact %s has no control \"%.64s\" (its controls: %s)",
				   json_string_value(json_object_get(decl, "id")), key, names.data ? names.data : "none");
		}
		char why[200];
		if (control_value(c, v, why, sizeof why)) {
			SB_AUTO_BUF d = {0};
			describe(&d, c);
			return say(msg, n, "control \"%s\" (%s): %s", key, d.data ? d.data : "", why);
		}
	}
	return 0;
}

char *sb_interact_summary(const json_t *decl)
{
	struct sb_buf b = {0};
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(decl, "controls"), i, c) {
		sb_buf_printf(&b, "%s%s: ", i ? ", " : "", json_string_value(json_object_get(c, "name")));
		describe(&b, c);
	}
	if (!b.data)
		sb_buf_printf(&b, "no controls");
	return sb_buf_steal(&b, NULL);
}
