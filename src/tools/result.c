/* What handlers share to build their results. */
#include <stdio.h>

#include "tools/tool.h"

void sb_tool_result_text(struct sb_tool_result *r, const char *text)
{
	json_t *t = json_string(text);
	if (!t)
		t = json_string("(the result could not be encoded as UTF-8)");
	if (!r->content)
		r->content = json_array();
	json_array_append_new(r->content, json_pack("{s:s, s:o}", "type", "text", "text", t));
}

void sb_tool_result_free(struct sb_tool_result *r)
{
	json_decref(r->content);
	json_decref(r->structured);
	r->content = r->structured = NULL;
}

void sb_tool_backend_of(const struct sb_tool_server *srv, const json_t *report, char *buf, size_t size)
{
	json_t *v = json_object_get(report, "backend");
	const char *b = json_is_object(v) ? json_string_value(json_object_get(v, "name")) : json_string_value(v);
	snprintf(buf, size, "%s", b ? b : srv->cfg->backend);
}
