#include "mcp/revision.h"

#include <string.h>

/* Newest first: an initialize asking for an unknown revision is answered
 * with the first. */
static const char *const legacy[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
static const char *const modern[] = {"2026-07-28"};

/* The revision that introduced each feature. Revisions are dates, so they
 * order as strings. */
static const char *const since[] = {
	[SB_REV_TOOL_ANNOTATIONS] = "2025-03-26",
	[SB_REV_PROGRESS_MESSAGE] = "2025-03-26",
	[SB_REV_TOOL_TITLE] = "2025-06-18",
	[SB_REV_OUTPUT_SCHEMA] = "2025-06-18",
	[SB_REV_STRUCTURED_CONTENT] = "2025-06-18",
	[SB_REV_RESOURCE_LINK] = "2025-06-18",
	[SB_REV_SERVER_DESCRIPTION] = "2025-11-25",
	[SB_REV_ARG_ERROR_RESULT] = "2025-11-25",
	[SB_REV_TASKS] = "2025-11-25",
	[SB_REV_STATELESS] = "2026-07-28",
	[SB_REV_CACHE_HINTS] = "2026-07-28",
	[SB_REV_PARAM_HEADERS] = "2026-07-28",
};

#define COUNT(a) (sizeof(a) / sizeof *(a))

static const char *find(const char *const *list, size_t n, const char *v)
{
	for (size_t i = 0; v && i < n; i++)
		if (!strcmp(v, list[i]))
			return list[i];
	return NULL;
}

const char *sb_rev_negotiate(const char *asked)
{
	const char *v = find(legacy, COUNT(legacy), asked);
	return v ? v : legacy[0];
}

const char *sb_rev_modern(const char *v)
{
	return find(modern, COUNT(modern), v);
}

bool sb_rev_is_legacy(const char *v)
{
	return find(legacy, COUNT(legacy), v) != NULL;
}

json_t *sb_rev_modern_list(void)
{
	json_t *a = json_array();
	for (size_t i = 0; i < COUNT(modern); i++)
		json_array_append_new(a, json_string(modern[i]));
	return a;
}

bool sb_rev_has(const char *rev, enum sb_rev_feature f)
{
	return rev && (unsigned)f < COUNT(since) && strcmp(rev, since[f]) >= 0;
}

bool sb_rev_tasks_core(const char *rev)
{
	return sb_rev_has(rev, SB_REV_TASKS) && !sb_rev_has(rev, SB_REV_STATELESS);
}
