/* sandbox_self_test: the self-test (self_test.c) as a tool, with a text
 * block a model can read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static char *self_test_text(const json_t *st)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		return NULL;
	bool ok = json_is_true(json_object_get(st, "ok"));
	const char *backend = json_string_value(json_object_get(st, "backend"));
	fprintf(f, "Self-test %s%s%s%s.\n", ok ? "passed" : "FAILED", backend ? " (backend " : "",
		backend ? backend : "", backend ? ")" : "");
	json_t *factor = json_object_get(st, "factor");
	const char *out = json_string_value(json_object_get(factor, "stdout"));
	const char *err = json_string_value(json_object_get(factor, "stderr"));
	if (factor)
		fprintf(f, "factor(x^4 - 1) printed: %.*s\n", out ? (int)strcspn(out, "\n") : 9,
			out && *out ? out : "(nothing)");
	if (err && *err)
		fprintf(f, "stderr:\n%s%s", err, err[strlen(err) - 1] == '\n' ? "" : "\n");
	const char *error = json_string_value(json_object_get(st, "error"));
	if (error)
		fprintf(f, "Error: %s\n", error);
	const char *hint = json_string_value(json_object_get(st, "hint"));
	if (hint && *hint)
		fprintf(f, "Hint: %s\n", hint);
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(st, "checks"), i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		const char *detail = json_string_value(json_object_get(c, "detail"));
		fprintf(f, "%s %s%s%s\n", json_is_true(json_object_get(c, "ok")) ? "[ok]  " : "[FAIL]", name ? name : "?",
			detail ? ": " : "", detail ? detail : "");
	}
	if (!ok)
		fputs("Call sandbox_status for details, and tell the user what failed.\n", f);
	fclose(f);
	if (size > 0 && buf[size - 1] == '\n')
		buf[size - 1] = '\0';
	return buf;
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
	char *text = self_test_text(st);
	sb_tool_result_text(out, text ? text : (ok ? "Self-test passed." : "Self-test FAILED."));
	free(text);
	out->is_error = !ok;
	out->structured = st;
	sb_tool_backend_of(srv, st, ctx->audit->backend, sizeof ctx->audit->backend);
	snprintf(ctx->audit->verdict, sizeof ctx->audit->verdict, "self-test %s", ok ? "passed" : "failed");
	ctx->audit->ok = ok;
}
