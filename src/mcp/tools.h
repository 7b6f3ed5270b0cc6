/* The tools the server offers: one table gives each its name, title,
 * description for a model, input schema, output schema and annotations, and
 * the argument check is driven by the same table, so the schema a client
 * sees and the validation the server does cannot drift apart. */
#ifndef SAGEBOX_MCP_TOOLS_H
#define SAGEBOX_MCP_TOOLS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "core/job.h"

enum sb_tool_kind { SB_TOOL_RUN, SB_TOOL_STATUS, SB_TOOL_SELF_TEST };

struct sb_tool {
	const char *name;
	const char *title;
	enum sb_tool_kind kind;
	enum sb_lang lang;  /* SB_TOOL_RUN */
};

const struct sb_tool *sb_tool_find(const char *name);

/* The result of tools/list for this protocol revision: fields a revision
 * does not define (annotations before 2025-03-26, title and outputSchema
 * before 2025-06-18) are left out. */
json_t *sb_tools_list(const struct sb_config *cfg, const char *version);

/* The arguments of a run tool once checked. */
struct sb_run_args {
	const char *code;     /* borrowed from the arguments object */
	size_t code_len;      /* bytes */
	size_t code_chars;    /* Unicode code points */
	unsigned timeout_s;   /* the default from the settings when not given */
};

/* Check arguments (an object, or NULL for none) against the tool's input
 * schema. Returns 0 (and fills *run for run tools; run may be NULL), or -1
 * with the reason in msg, phrased for the model that wrote the call. */
int sb_tool_check_args(const struct sb_tool *t, const json_t *args, const struct sb_config *cfg,
		       struct sb_run_args *run, char *msg, size_t size);

#endif
