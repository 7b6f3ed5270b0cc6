#include "mcp/toolcall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp/server.h"
#include "tools/self_test.h"

json_t *sb_tool_text_result(const char *text, bool is_error)
{
	json_t *t = json_string(text);
	if (!t)
		t = json_string("(the result could not be encoded as UTF-8)");
	return json_pack("{s:[{s:s, s:o}], s:b}", "content", "type", "text", "text", t, "isError", is_error);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool structured(const struct sb_tool_env *env)
{
	return sb_mcp_version_has(env->version, "2025-06-18");
}

/* The result when there is no runner: the same shape as a run's result, with
 * the reason as a sandbox error. */
static void no_runner_result(const struct sb_tool_env *env, unsigned timeout_s, struct sb_result *res)
{
	res->internal_error = strdup(env->runner_err->msg[0] ? env->runner_err->msg : "the runner could not be created");
	if (env->runner_err->hint[0])
		res->hint = strdup(env->runner_err->hint);
	res->timeout_s = timeout_s;
	res->max_bytes_per_stream = env->cfg->limits.output_bytes;
}

static void backend_of(const struct sb_tool_env *env, const json_t *sandbox, char *buf, size_t size)
{
	/* "backend": "native" in a result's sandbox, {"name": "native", ...} in a status. */
	json_t *v = json_object_get(sandbox, "backend");
	const char *b = json_is_object(v) ? json_string_value(json_object_get(v, "name")) : json_string_value(v);
	snprintf(buf, size, "%s", b ? b : env->cfg->backend);
}

static json_t *run_tool(const struct sb_tool_env *env, const struct sb_tool *t, const struct sb_run_args *args,
			const struct sb_run_hooks *hooks, struct sb_audit_record *rec, bool *cancelled)
{
	struct sb_job job = {
		.lang = t->lang,
		.code = args->code,
		.code_len = args->code_len,
		.limits = env->cfg->limits,
	};
	job.limits.timeout_s = args->timeout_s;

	struct sb_result res;
	sb_result_init(&res);
	if (!env->runner) {
		no_runner_result(env, args->timeout_s, &res);
	} else if (sb_runner_run(env->runner, &job, hooks, &res) < 0 && !res.internal_error) {
		res.internal_error = strdup("the runner failed without saying why");
	}
	if (!res.out.data)
		res.out.data = strdup("");
	if (!res.err.data)
		res.err.data = strdup("");
	*cancelled = res.cancelled;

	sb_result_verdict(&res, rec->verdict, sizeof rec->verdict);
	backend_of(env, res.sandbox, rec->backend, sizeof rec->backend);
	rec->duration_ms = res.duration_ms;
	rec->ok = sb_result_ok(&res);

	char *text = sb_result_text(&res, t, env->cfg);
	json_t *out = sb_tool_text_result(text ? text : rec->verdict, !sb_result_ok(&res));
	free(text);
	if (structured(env))
		json_object_set_new(out, "structuredContent", sb_result_to_json(&res));
	sb_result_free(&res);
	return out;
}

static json_t *status_tool(const struct sb_tool_env *env, struct sb_audit_record *rec)
{
	json_t *st = env->runner ? sb_runner_status(env->runner) : NULL;
	if (!json_is_object(st)) {
		json_t *inner = st;
		st = json_pack("{s:b, s:s, s:s}", "ok", 0, "error",
			       env->runner_err->msg[0] ? env->runner_err->msg : "the runner could not be created",
			       "hint", env->runner_err->hint);
		if (inner)
			json_object_set_new(st, "status", inner);
	}
	json_object_set_new(st, "settings", sb_config_to_json(env->cfg));
	json_object_set_new(st, "mcp",
			    json_pack("{s:s, s:s, s:s?}", "server_version", SAGEBOX_MCP_VERSION, "protocol_version",
				      env->version ? env->version : "", "audit_log",
				      env->cfg->audit_log[0] ? env->cfg->audit_log : NULL));
	char *text = json_dumps(st, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_t *out = sb_tool_text_result(text ? text : "(status could not be encoded)", false);
	free(text);
	if (structured(env))
		json_object_set_new(out, "structuredContent", json_incref(st));
	backend_of(env, st, rec->backend, sizeof rec->backend);
	snprintf(rec->verdict, sizeof rec->verdict, "status reported");
	rec->ok = true;
	json_decref(st);
	return out;
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
		const char *detail = json_string_value(json_object_get(c, "detail"));
		fprintf(f, "%s %s%s%s\n", json_is_true(json_object_get(c, "ok")) ? "[ok]  " : "[FAIL]",
			json_string_value(json_object_get(c, "name")) ? json_string_value(json_object_get(c, "name")) : "?",
			detail ? ": " : "", detail ? detail : "");
	}
	if (!ok)
		fputs("Call sandbox_status for details, and tell the user what failed.\n", f);
	fclose(f);
	if (size > 0 && buf[size - 1] == '\n')
		buf[size - 1] = '\0';
	return buf;
}

static json_t *self_test_tool(const struct sb_tool_env *env, struct sb_audit_record *rec)
{
	json_t *st = env->runner ? sb_self_test(env->runner) : NULL;
	if (!json_is_object(st)) {
		json_decref(st);
		st = json_pack("{s:b, s:s, s:s, s:[]}", "ok", 0, "error",
			       env->runner_err->msg[0] ? env->runner_err->msg : "the self-test could not run", "hint",
			       env->runner_err->hint, "checks");
	}
	bool ok = json_is_true(json_object_get(st, "ok"));
	char *text = self_test_text(st);
	json_t *out = sb_tool_text_result(text ? text : (ok ? "Self-test passed." : "Self-test FAILED."), !ok);
	free(text);
	if (structured(env))
		json_object_set_new(out, "structuredContent", json_incref(st));
	backend_of(env, st, rec->backend, sizeof rec->backend);
	snprintf(rec->verdict, sizeof rec->verdict, "self-test %s", ok ? "passed" : "failed");
	rec->ok = ok;
	json_decref(st);
	return out;
}

json_t *sb_tool_execute(const struct sb_tool_env *env, const struct sb_tool *t, const struct sb_run_args *args,
			const struct sb_run_hooks *hooks, struct sb_audit_record *rec, bool *cancelled)
{
	uint64_t start = now_ms();
	*cancelled = false;
	rec->tool = t->name;
	json_t *out;
	switch (t->kind) {
	case SB_TOOL_RUN:
		rec->code = args->code;
		rec->code_len = args->code_len;
		rec->code_chars = args->code_chars;
		rec->timeout_s = args->timeout_s;
		return run_tool(env, t, args, hooks, rec, cancelled);
	case SB_TOOL_STATUS:
		out = status_tool(env, rec);
		break;
	case SB_TOOL_SELF_TEST:
	default:
		out = self_test_tool(env, rec);
		break;
	}
	rec->duration_ms = now_ms() - start;
	return out;
}
