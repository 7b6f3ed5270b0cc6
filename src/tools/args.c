/* Tool arguments: the input schema a client sees and the check the server
 * makes are both built from a row's argument table. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tool.h"
#include "util/buf.h"
#include "util/jsontext.h"
#include "util/utf8.h"

static json_t *arg_schema(const struct sb_tool_arg *a, const struct sb_config *cfg, bool headers)
{
	json_t *o = json_object();
	json_object_set_new(o, "type", json_string(a->type == SB_ARG_INTEGER	? "integer"
						   : a->type == SB_ARG_BOOLEAN ? "boolean"
						   : a->type == SB_ARG_OBJECT  ? "object"
									       : "string"));
	if (a->type == SB_ARG_OBJECT) {
		if (a->max > 0)
			json_object_set_new(o, "maxProperties", json_integer(a->max));
	} else if (a->type == SB_ARG_INTEGER) {
		json_object_set_new(o, "minimum", json_integer(a->min));
		json_object_set_new(o, "maximum", json_integer(a->max));
	} else if (a->max > 0) {
		json_object_set_new(o, "maxLength", json_integer(a->max));
	}
	if (a->choices) {
		json_t *e = json_array();
		for (const char *const *c = a->choices; *c; c++)
			json_array_append_new(e, json_string(*c));
		json_object_set_new(o, "enum", e);
	}
	char *text = a->describe ? a->describe(cfg) : NULL;
	const char *desc = text ? text : a->description;
	if (desc)
		json_object_set_new(o, "description", json_string(desc));
	free(text);
	if (headers && a->header)
		json_object_set_new(o, "x-mcp-header", json_string(a->header));
	return o;
}

json_t *sb_tool_input_schema(const struct sb_tool *t, const struct sb_config *cfg, bool headers)
{
	json_t *props = json_object(), *required = json_array();
	for (const struct sb_tool_arg *a = t->args; a && a->name; a++) {
		json_object_set_new(props, a->name, arg_schema(a, cfg, headers));
		if (a->required)
			json_array_append_new(required, json_string(a->name));
	}
	json_t *o = json_pack("{s:s, s:o}", "type", "object", "properties", props);
	if (json_array_size(required))
		json_object_set_new(o, "required", required);
	else
		json_decref(required);
	json_object_set_new(o, "additionalProperties", json_false());
	return o;
}

static const struct sb_tool_arg *find_arg(const struct sb_tool *t, const char *name, size_t len)
{
	for (const struct sb_tool_arg *a = t->args; a && a->name; a++)
		if (strlen(a->name) == len && !memcmp(a->name, name, len))
			return a;
	return NULL;
}

/* JSON Schema's "integer": any number with a zero fractional part. */
static int as_integer(const json_t *v, long long *out)
{
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (isfinite(d) && d == floor(d) && fabs(d) < 1e15) {
			*out = (long long)d;
			return 0;
		}
	}
	return -1;
}

__attribute__((format(printf, 4, 5))) static int refuse(const struct sb_tool *t, char *msg, size_t size,
							 const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(msg, size, "Invalid arguments for tool %s: ", t->name);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < size)
		vsnprintf(msg + n, size - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* "allowed: a, b" or "this tool takes no arguments". */
static void allowed(const struct sb_tool *t, char *buf, size_t size)
{
	SB_AUTO_BUF b = {0};
	for (const struct sb_tool_arg *a = t->args; a && a->name; a++)
		sb_buf_printf(&b, "%s%s", b.len ? ", " : "allowed: ", a->name);
	snprintf(buf, size, "%s", b.data ? b.data : "this tool takes no arguments");
}

static int check_value(const struct sb_tool *t, const struct sb_tool_arg *a, const json_t *v, char *msg,
		       size_t size)
{
	if (a->type == SB_ARG_INTEGER) {
		long long n;
		if (as_integer(v, &n) < 0 || n < a->min || n > a->max)
			return refuse(t, msg, size, "\"%s\" must be an integer from %lld to %lld", a->name, a->min,
				      a->max);
		return 0;
	}
	if (a->type == SB_ARG_BOOLEAN)
		return json_is_boolean(v) ? 0 : refuse(t, msg, size, "\"%s\" must be true or false", a->name);
	if (a->type == SB_ARG_OBJECT) {
		if (!json_is_object(v))
			return refuse(t, msg, size, "\"%s\" must be an object", a->name);
		if (a->max > 0 && json_object_size(v) > (size_t)a->max)
			return refuse(t, msg, size, "\"%s\" has %zu members; the most is %lld", a->name,
				      json_object_size(v), a->max);
		return 0;
	}
	if (!json_is_string(v))
		return refuse(t, msg, size, "\"%s\" must be a string", a->name);
	if (a->type == SB_ARG_STRING && sb_json_has_nul(v))
		return refuse(t, msg, size, "\"%s\" contains a NUL character (\\u0000), which is not allowed here",
			      a->name);
	for (const char *const *c = a->choices; c && *c; c++)
		if (!strcmp(*c, json_string_value(v)))
			return 0;
	if (a->choices) {
		SB_AUTO_BUF b = {0};
		for (const char *const *c = a->choices; *c; c++)
			sb_buf_printf(&b, "%s\"%s\"", c == a->choices ? "" : ", ", *c);
		return refuse(t, msg, size, "\"%s\" must be one of %s", a->name, b.data ? b.data : "");
	}
	size_t chars = sb_utf8_count(json_string_value(v), json_string_length(v));
	if (a->max > 0 && chars > (size_t)a->max)
		return refuse(t, msg, size,
			      "\"%s\" is %zu characters long; the limit is %lld. Split the work into several calls.",
			      a->name, chars, a->max);
	return 0;
}

int sb_tool_check_args(const struct sb_tool *t, const json_t *args, char *msg, size_t size)
{
	if (args && !json_is_object(args))
		return refuse(t, msg, size, "\"arguments\" must be an object");
	const char *key;
	size_t keylen;
	json_t *v;
	json_object_keylen_foreach((json_t *)args, key, keylen, v) {
		if (find_arg(t, key, keylen))
			continue;
		/* The key may hold any bytes: quote only a printable prefix. */
		char shown[64], list[512];
		size_t n = 0;
		for (size_t i = 0; i < keylen && n + 1 < sizeof shown; i++)
			shown[n++] = (unsigned char)key[i] >= 0x20 && key[i] != '"' ? key[i] : '?';
		shown[n] = '\0';
		allowed(t, list, sizeof list);
		return refuse(t, msg, size, "unknown argument \"%s\" (%s)", shown, list);
	}
	for (const struct sb_tool_arg *a = t->args; a && a->name; a++) {
		json_t *val = args ? json_object_get(args, a->name) : NULL;
		if (!val) {
			if (a->required)
				return refuse(t, msg, size, "missing required argument \"%s\"", a->name);
			continue;
		}
		if (check_value(t, a, val, msg, size) < 0)
			return -1;
	}
	return t->check ? t->check(t, args, msg, size) : 0;
}

const struct sb_tool_arg *sb_tool_code_arg(const struct sb_tool *t)
{
	for (const struct sb_tool_arg *a = t->args; a && a->name; a++)
		if (a->type == SB_ARG_CODE)
			return a;
	return NULL;
}

const char *sb_tool_audited_text(const struct sb_tool *t, const json_t *args, size_t *len, char **owned)
{
	*owned = NULL;
	*len = 0;
	const struct sb_tool_arg *code = sb_tool_code_arg(t);
	if (code)
		return sb_tool_arg_text(args, code->name, len);
	for (const struct sb_tool_arg *a = t->args; a && a->name; a++) {
		json_t *v = a->type == SB_ARG_OBJECT ? json_object_get(args, a->name) : NULL;
		if (v && (*owned = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS)))
			*len = strlen(*owned);
		if (*owned)
			return *owned;
	}
	return NULL;
}

const char *sb_tool_arg_text(const json_t *args, const char *name, size_t *len)
{
	json_t *v = json_object_get(args, name);
	if (len)
		*len = json_string_length(v);
	return json_string_value(v);
}

long long sb_tool_arg_int(const json_t *args, const char *name, long long dflt)
{
	long long n;
	json_t *v = json_object_get(args, name);
	return v && as_integer(v, &n) == 0 ? n : dflt;
}
