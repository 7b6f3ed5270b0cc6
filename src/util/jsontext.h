/* JSON strings that are used as C strings. The parser accepts \u0000 inside
 * strings (code may contain it), so a name, method or path read with
 * json_string_value() would end at the first NUL: "run_python\u0000x" would
 * compare equal to "run_python". Whatever is compared, looked up or passed
 * on as a C string is read through sb_json_text() instead. */
#ifndef SAGEBOX_JSONTEXT_H
#define SAGEBOX_JSONTEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

/* v holds a string with an embedded NUL. */
static inline bool sb_json_has_nul(const json_t *v)
{
	return json_is_string(v) && strlen(json_string_value(v)) != json_string_length(v);
}

/* The string's value, or NULL when v is not a string or holds a NUL. */
static inline const char *sb_json_text(const json_t *v)
{
	return json_is_string(v) && !sb_json_has_nul(v) ? json_string_value(v) : NULL;
}

#endif
