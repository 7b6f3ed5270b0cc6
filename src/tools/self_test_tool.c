/* sandbox_self_test: the self-test (self_test.c) as a tool; its text block
 * is self_test_text.c's brief form. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/report_text.h"
#include "tools/self_test.h"

char *sb_self_test_description(const struct sb_config *cfg)
{
	return strdup("Check the sandbox end to end: runs `print(factor(x^4 - 1))` with Sage in the same sandbox as "
		      "run_sagemath, plus checks made from inside the sandbox that its isolation holds (no network, "
		      "no host files, limits in force). Takes a few seconds. Use it when the sandbox seems broken or "
		      "the user asks whether it works; it is not needed before normal use.");
}

json_t *sb_self_test_output_schema(void)
{
	return json_pack("{s:s, s:{s:{s:s}, s:{s:s}, s:{s:[s,s]}, s:{s:s, s:{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}}}}},"
			 " s:[s]}",
			 "type", "object", "properties", "ok", "type", "boolean", "backend", "type", "string", "factor",
			 "type", "object", "null", "checks", "type", "array", "items", "type", "object", "properties",
			 "name", "type", "string", "ok", "type", "boolean", "detail", "type", "string", "required", "ok");
}

void sb_self_test_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			  struct sb_tool_result *out)
{
	const struct sb_tool_server *srv = ctx->srv;
	json_t *st = srv->runner ? sb_self_test(srv->runner) : NULL;
	if (!json_is_object(st)) {
		json_decref(st);
		st = json_pack("{s:b, s:s, s:s, s:[]}", "ok", 0, "error",
			       srv->runner_err.msg[0] ? srv->runner_err.msg : "the self-test could not run", "hint",
			       srv->runner_err.hint, "checks");
	}
	bool ok = json_is_true(json_object_get(st, "ok"));
	char *text = sb_self_test_text(st, SB_REPORT_BRIEF);
	sb_tool_result_text(out, text ? text : (ok ? "Self-test passed." : "Self-test FAILED."));
	free(text);
	out->is_error = !ok;
	out->structured = st;
	sb_tool_backend_of(srv, st, ctx->audit->backend, sizeof ctx->audit->backend);
	snprintf(ctx->audit->verdict, sizeof ctx->audit->verdict, "self-test %s", ok ? "passed" : "failed");
	ctx->audit->ok = ok;
}
