#include "mcp/revision.h"

#include <string.h>

/* Newest first: an unknown revision is answered with the first. */
static const char *const revisions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

/* The revision that introduced each feature. Revisions are dates, so they
 * order as strings. */
static const char *const since[] = {
	[SB_REV_TOOL_ANNOTATIONS] = "2025-03-26",
	[SB_REV_PROGRESS_MESSAGE] = "2025-03-26",
	[SB_REV_TOOL_TITLE] = "2025-06-18",
	[SB_REV_OUTPUT_SCHEMA] = "2025-06-18",
	[SB_REV_STRUCTURED_CONTENT] = "2025-06-18",
	[SB_REV_SERVER_DESCRIPTION] = "2025-11-25",
};

const char *sb_rev_negotiate(const char *asked)
{
	for (size_t i = 0; asked && i < sizeof revisions / sizeof *revisions; i++)
		if (!strcmp(asked, revisions[i]))
			return revisions[i];
	return revisions[0];
}

bool sb_rev_has(const char *rev, enum sb_rev_feature f)
{
	return rev && (unsigned)f < sizeof since / sizeof *since && strcmp(rev, since[f]) >= 0;
}
