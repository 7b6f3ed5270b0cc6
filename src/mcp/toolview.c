#include "mcp/toolview.h"

#include <stdlib.h>
#include <string.h>

#include "mcp/revision.h"

static json_t *annotations(const struct sb_tool *t)
{
	return json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", t->title, "readOnlyHint", t->hints.read_only,
			 "destructiveHint", t->hints.destructive, "idempotentHint", t->hints.idempotent,
			 "openWorldHint", t->hints.open_world);
}

static json_t *entry(const struct sb_tool *t, const struct sb_config *cfg, const char *revision)
{
	char *desc = t->description(cfg);
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(t->name));
	if (sb_rev_has(revision, SB_REV_TOOL_TITLE))
		json_object_set_new(o, "title", json_string(t->title));
	json_object_set_new(o, "description", json_string(desc ? desc : t->title));
	json_object_set_new(o, "inputSchema", sb_tool_input_schema(t, cfg, sb_rev_has(revision, SB_REV_PARAM_HEADERS)));
	if (sb_rev_has(revision, SB_REV_OUTPUT_SCHEMA))
		json_object_set_new(o, "outputSchema", t->output_schema());
	if (sb_rev_has(revision, SB_REV_TOOL_ANNOTATIONS))
		json_object_set_new(o, "annotations", annotations(t));
	if (sb_rev_tasks_core(revision)) /* 2026-07-28: the server decides, per call */
		json_object_set_new(o, "execution", json_pack("{s:s}", "taskSupport",
							      t->task_support ? "optional" : "forbidden"));
	free(desc);
	return o;
}

json_t *sb_mcp_tools_list(const struct sb_config *cfg, const char *revision)
{
	json_t *list = json_array();
	for (size_t i = 0; i < sb_tools_count; i++)
		json_array_append_new(list, entry(&sb_tools[i], cfg, revision));
	return json_pack("{s:o}", "tools", list);
}

/* Blocks of a type the revision does not know are left out (a client that
 * checks content against its schema would refuse the whole result). */
static void drop_unknown_blocks(json_t *content, const char *revision)
{
	if (!content || sb_rev_has(revision, SB_REV_RESOURCE_LINK))
		return;
	for (size_t i = json_array_size(content); i-- > 0;) {
		const char *type = json_string_value(json_object_get(json_array_get(content, i), "type"));
		if (type && !strcmp(type, "resource_link"))
			json_array_remove(content, i);
	}
}

json_t *sb_mcp_call_result(struct sb_tool_result *r, const char *revision)
{
	drop_unknown_blocks(r->content, revision);
	json_t *out = json_pack("{s:o, s:b}", "content", r->content ? r->content : json_array(), "isError",
				r->is_error);
	r->content = NULL;
	if (r->structured && sb_rev_has(revision, SB_REV_STRUCTURED_CONTENT))
		json_object_set_new(out, "structuredContent", r->structured);
	else
		json_decref(r->structured);
	r->structured = NULL;
	return out;
}

json_t *sb_mcp_text_result(const char *text, bool is_error)
{
	struct sb_tool_result r = {.is_error = is_error};
	sb_tool_result_text(&r, text);
	return sb_mcp_call_result(&r, NULL);
}

size_t sb_mcp_param_headers(const char *tool, struct sb_mcp_param_header out[SB_MCP_PARAM_HEADERS_MAX])
{
	const struct sb_tool *t = tool ? sb_tool_find(tool) : NULL;
	size_t n = 0;
	for (const struct sb_tool_arg *a = t ? t->args : NULL; a && a->name && n < SB_MCP_PARAM_HEADERS_MAX; a++)
		if (a->header)
			out[n++] = (struct sb_mcp_param_header){
				.header = a->header,
				.arg = a->name,
				.type = a->type == SB_ARG_INTEGER ? SB_MCP_PARAM_INTEGER
					: a->type == SB_ARG_BOOLEAN ? SB_MCP_PARAM_BOOLEAN
								    : SB_MCP_PARAM_STRING,
			};
	return n;
}
