/* The seed's self-test (factor x^4 - 1 in the same sandbox as run_sagemath)
 * plus checks of the sandbox made from inside it, by code running there. */
#ifndef SAGEBOX_SELF_TEST_H
#define SAGEBOX_SELF_TEST_H

#include <jansson.h>

#include "runner/runner.h"
#include "tools/tool.h"

/* Returns {"ok": bool, "backend": "...", "factor": {result object},
 * "checks": [{"name", "ok", "detail"}...]} (new reference). */
json_t *sb_self_test(struct sb_runner *r);

/* The sandbox_self_test tool (self_test_tool.c). */
char *sb_self_test_description(const struct sb_config *cfg);
json_t *sb_self_test_output_schema(void);
void sb_self_test_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			  struct sb_tool_result *out);

#endif
