/* A run result as the model reads it. */
#ifndef SAGEBOX_TOOLS_RESULT_TEXT_H
#define SAGEBOX_TOOLS_RESULT_TEXT_H

#include "core/result.h"
#include "tools/tool.h"

/* The text block of a run result, written for a model: stdout, then stderr
 * (labelled), then the verdict and, on failure, what to do (malloc'd). */
char *sb_result_text(const struct sb_result *r, const struct sb_tool *t, const struct sb_config *cfg);

#endif
