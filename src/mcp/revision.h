/* The MCP revisions this server speaks and what each one defines. A field a
 * revision does not define is left out of answers in that revision. */
#ifndef SAGEBOX_MCP_REVISION_H
#define SAGEBOX_MCP_REVISION_H

#include <stdbool.h>

enum sb_rev_feature {
	SB_REV_TOOL_ANNOTATIONS,     /* tool annotations */
	SB_REV_PROGRESS_MESSAGE,     /* notifications/progress "message" */
	SB_REV_TOOL_TITLE,           /* tool "title" */
	SB_REV_OUTPUT_SCHEMA,        /* tool "outputSchema" */
	SB_REV_STRUCTURED_CONTENT,   /* CallToolResult "structuredContent" */
	SB_REV_SERVER_DESCRIPTION,   /* serverInfo "description" */
};

/* The revision to answer an initialize that asked for `asked`: the same
 * when supported, else the newest (a static string). */
const char *sb_rev_negotiate(const char *asked);

/* Whether revision rev (NULL: none yet) has the feature. */
bool sb_rev_has(const char *rev, enum sb_rev_feature f);

#endif
