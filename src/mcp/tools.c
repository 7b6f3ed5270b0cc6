#include "mcp/tools.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "mcp/server.h"
#include "util/utf8.h"

static const struct sb_tool tools[] = {
	{"run_sagemath", "Run SageMath", SB_TOOL_RUN, SB_LANG_SAGE},
	{"run_python", "Run Python", SB_TOOL_RUN, SB_LANG_PYTHON},
	{"run_shell", "Run shell script", SB_TOOL_RUN, SB_LANG_SHELL},
	{"sandbox_status", "Sandbox status", SB_TOOL_STATUS, SB_LANG_SAGE},
	{"sandbox_self_test", "Sandbox self-test", SB_TOOL_SELF_TEST, SB_LANG_SAGE},
};

#define NTOOLS (sizeof tools / sizeof *tools)

const struct sb_tool *sb_tool_find(const char *name)
{
	for (size_t i = 0; name && i < NTOOLS; i++)
		if (!strcmp(tools[i].name, name))
			return &tools[i];
	return NULL;
}

/* What every run tool's description says about the sandbox and its limits. */
static void limits_text(char *buf, size_t size, const struct sb_config *cfg)
{
	snprintf(buf, size,
		 "Every call starts fresh: nothing is kept between calls, so define everything you use "
		 "in the same call. Limits: %u s wall clock by default (pass timeout_seconds, up to %d, for "
		 "longer work), %s of memory, %zu KiB of output per stream (longer output is cut in the "
		 "middle, so print summaries rather than huge objects), at most %d characters of code. "
		 "There is no network access and no access to the user's files: the sandbox sees only a "
		 "read-only system and a scratch /tmp that is discarded after the call. A failure of your "
		 "code comes back as an error result with its traceback; fix the code and call again. If "
		 "the result says the sandbox itself failed, call sandbox_status and tell the user what it "
		 "reports.",
		 cfg->limits.timeout_s, SB_TIMEOUT_MAX_S, cfg->limits.memory, cfg->limits.output_bytes / 1024,
		 SB_CODE_MAX_CHARS);
}

#define STATUS_DESC                                                                                   \
	"Report the sandbox's state without running any code: the backend in use, whether Sage, "     \
	"Python and the shell are available and their versions, which isolation and limits are "     \
	"really enforced on this machine, and the active settings. Call it when a run tool reports "  \
	"that the sandbox failed (rather than a traceback from your code), or when the user asks how " \
	"the sandbox is set up."

#define SELF_TEST_DESC                                                                                \
	"Check the sandbox end to end: runs `print(factor(x^4 - 1))` with Sage in the same sandbox as " \
	"run_sagemath, plus checks made from inside the sandbox that its isolation holds (no network, " \
	"no host files, limits in force). Takes a few seconds. Use it when the sandbox seems broken or " \
	"the user asks whether it works; it is not needed before normal use."

static char *description(const struct sb_tool *t, const struct sb_config *cfg)
{
	char limits[2048], *out = NULL;
	limits_text(limits, sizeof limits, cfg);
	if (t->kind == SB_TOOL_STATUS)
		return strdup(STATUS_DESC);
	if (t->kind == SB_TOOL_SELF_TEST)
		return strdup(SELF_TEST_DESC);
	switch (t->lang) {
	case SB_LANG_SAGE:
		if (asprintf(&out,
			     "Run SageMath code in an isolated sandbox and return what it prints. Use it for exact "
			     "and symbolic mathematics: polynomials and factoring, algebra, number theory, calculus, "
			     "linear algebra, combinatorics, groups, elliptic curves, exact or high-precision "
			     "numerics. The code is a Sage script: Sage's preparser applies, so `R.<x> = QQ[]` "
			     "defines a polynomial ring, `^` is a power and `1/3` is an exact rational (use `n()` or "
			     "`RR` for decimals); use `var('y')` for symbolic variables. Show results with "
			     "`print(...)`; the value of a bare expression on the last line is shown too (end the "
			     "line with `;` to hide it). %s",
			     limits) < 0)
			out = NULL;
		break;
	case SB_LANG_PYTHON:
		if (asprintf(&out,
			     "Run Python 3 code in the same isolated sandbox as run_sagemath and return what it "
			     "prints. Use it for general computation, simulations, string and data processing that "
			     "do not need Sage's syntax (Sage's modules are importable: `from sage.all import *`). No "
			     "packages can be installed. Show results with `print(...)`; the value of a bare "
			     "expression on the last line is shown too. %s",
			     limits) < 0)
			out = NULL;
		break;
	case SB_LANG_SHELL:
		if (asprintf(&out,
			     "Run a POSIX shell script (%s) in the same isolated sandbox as run_sagemath and return "
			     "its stdout and stderr. Use it for small command-line tasks inside the sandbox, such as "
			     "checking which programs are available or running a command-line math tool; not for "
			     "inspecting the user's machine, which the sandbox cannot see. %s",
			     cfg->shell, limits) < 0)
			out = NULL;
		break;
	}
	return out;
}

static json_t *input_schema(const struct sb_tool *t, const struct sb_config *cfg)
{
	if (t->kind != SB_TOOL_RUN)
		return json_pack("{s:s, s:{}, s:b}", "type", "object", "properties", "additionalProperties", 0);
	char code_desc[256], timeout_desc[256];
	snprintf(code_desc, sizeof code_desc,
		 "The %s to run, at most %d characters. Print the values you want to see.",
		 t->lang == SB_LANG_SAGE ? "Sage code" : t->lang == SB_LANG_PYTHON ? "Python code" : "shell script",
		 SB_CODE_MAX_CHARS);
	snprintf(timeout_desc, sizeof timeout_desc,
		 "Wall-clock limit in seconds, %d to %d. Default: %u.", SB_TIMEOUT_MIN_S, SB_TIMEOUT_MAX_S,
		 cfg->limits.timeout_s);
	return json_pack("{s:s, s:{s:{s:s, s:i, s:s}, s:{s:s, s:i, s:i, s:s}}, s:[s], s:b}", "type", "object",
			 "properties", "code", "type", "string", "maxLength", SB_CODE_MAX_CHARS, "description",
			 code_desc, "timeout_seconds", "type", "integer", "minimum", SB_TIMEOUT_MIN_S, "maximum",
			 SB_TIMEOUT_MAX_S, "description", timeout_desc, "required", "code",
			 "additionalProperties", 0);
}

/* The shape of sb_result_to_json (the seed's result object). Open to
 * additions (no additionalProperties: false), so a new field in the result
 * never breaks a client that validates structuredContent. */
static json_t *run_output_schema(void)
{
	return json_pack(
		"{s:s, s:{s:{s:s}, s:{s:[s,s]}, s:{s:[s,s]}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s},"
		" s:{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}},"
		" s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:[s,s]}},"
		" s:[s,s,s,s,s,s,s,s]}",
		"type", "object", "properties",
		"ok", "type", "boolean",
		"exit_code", "type", "integer", "null",
		"signal", "type", "string", "null",
		"timed_out", "type", "boolean",
		"output_limit_exceeded", "type", "boolean",
		"cancelled", "type", "boolean",
		"stdout", "type", "string",
		"stderr", "type", "string",
		"truncated", "type", "object", "properties",
		"stdout", "type", "boolean", "stderr", "type", "boolean", "max_bytes_per_stream", "type",
		"integer", "stdout_total_bytes", "type", "integer", "stderr_total_bytes", "type", "integer",
		"duration_ms", "type", "integer",
		"timeout_seconds", "type", "integer",
		"error", "type", "string",
		"hint", "type", "string",
		"sandbox", "type", "object", "null",
		"required", "ok", "exit_code", "signal", "timed_out", "output_limit_exceeded", "stdout", "stderr",
		"duration_ms");
}

static json_t *output_schema(const struct sb_tool *t)
{
	switch (t->kind) {
	case SB_TOOL_RUN:
		return run_output_schema();
	case SB_TOOL_SELF_TEST:
		return json_pack("{s:s, s:{s:{s:s}, s:{s:s}, s:{s:[s,s]}, s:{s:s, s:{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}}}}},"
				 " s:[s]}",
				 "type", "object", "properties", "ok", "type", "boolean", "backend", "type", "string",
				 "factor", "type", "object", "null", "checks", "type", "array", "items", "type",
				 "object", "properties", "name", "type", "string", "ok", "type", "boolean", "detail",
				 "type", "string", "required", "ok");
	case SB_TOOL_STATUS:
	default:
		return json_pack("{s:s, s:{s:{s:s}}, s:[s]}", "type", "object", "properties", "settings", "type",
				 "object", "required", "settings");
	}
}

static json_t *annotations(const struct sb_tool *t)
{
	bool run = t->kind == SB_TOOL_RUN;
	/* Run tools change nothing on the host but do run arbitrary code each
	 * time (not read-only, not idempotent); nothing reaches outside the
	 * sandbox (closed world). The checks only observe. */
	return json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", t->title, "readOnlyHint", !run, "destructiveHint", 0,
			 "idempotentHint", !run, "openWorldHint", 0);
}

json_t *sb_tools_list(const struct sb_config *cfg, const char *version)
{
	json_t *list = json_array();
	for (size_t i = 0; i < NTOOLS; i++) {
		const struct sb_tool *t = &tools[i];
		char *desc = description(t, cfg);
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(t->name));
		if (sb_mcp_version_has(version, "2025-06-18"))
			json_object_set_new(o, "title", json_string(t->title));
		json_object_set_new(o, "description", json_string(desc ? desc : t->title));
		json_object_set_new(o, "inputSchema", input_schema(t, cfg));
		if (sb_mcp_version_has(version, "2025-06-18"))
			json_object_set_new(o, "outputSchema", output_schema(t));
		if (sb_mcp_version_has(version, "2025-03-26"))
			json_object_set_new(o, "annotations", annotations(t));
		json_array_append_new(list, o);
		free(desc);
	}
	return json_pack("{s:o}", "tools", list);
}

/* JSON Schema's "integer": any number with a zero fractional part. */
static int as_integer(const json_t *v, long long *out)
{
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (isfinite(d) && d == floor(d) && fabs(d) < 1e15) {
			*out = (long long)d;
			return 0;
		}
	}
	return -1;
}

int sb_tool_check_args(const struct sb_tool *t, const json_t *args, const struct sb_config *cfg,
		       struct sb_run_args *run, char *msg, size_t size)
{
	if (args && !json_is_object(args)) {
		snprintf(msg, size, "Invalid arguments for tool %s: \"arguments\" must be an object", t->name);
		return -1;
	}
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)args, key, v) {
		bool known = t->kind == SB_TOOL_RUN && (!strcmp(key, "code") || !strcmp(key, "timeout_seconds"));
		if (!known) {
			/* key may hold any bytes (\u0000); quote only a printable prefix. */
			char shown[64];
			size_t n = 0;
			for (const char *p = key; *p && n + 1 < sizeof shown; p++)
				shown[n++] = (unsigned char)*p >= 0x20 && *p != '"' ? *p : '?';
			shown[n] = '\0';
			snprintf(msg, size, "Invalid arguments for tool %s: unknown argument \"%s\" (%s)", t->name,
				 shown,
				 t->kind == SB_TOOL_RUN ? "allowed: code, timeout_seconds" : "this tool takes no arguments");
			return -1;
		}
	}
	if (t->kind != SB_TOOL_RUN)
		return 0;

	json_t *code = args ? json_object_get(args, "code") : NULL;
	if (!code) {
		snprintf(msg, size, "Invalid arguments for tool %s: missing required argument \"code\"", t->name);
		return -1;
	}
	if (!json_is_string(code)) {
		snprintf(msg, size, "Invalid arguments for tool %s: \"code\" must be a string", t->name);
		return -1;
	}
	size_t len = json_string_length(code);
	size_t chars = sb_utf8_count(json_string_value(code), len);
	if (chars > SB_CODE_MAX_CHARS) {
		snprintf(msg, size,
			 "Invalid arguments for tool %s: \"code\" is %zu characters long; the limit is %d. "
			 "Split the work into several calls.",
			 t->name, chars, SB_CODE_MAX_CHARS);
		return -1;
	}
	unsigned timeout = cfg->limits.timeout_s;
	json_t *to = args ? json_object_get(args, "timeout_seconds") : NULL;
	if (to) {
		long long n;
		if (as_integer(to, &n) < 0 || n < SB_TIMEOUT_MIN_S || n > SB_TIMEOUT_MAX_S) {
			snprintf(msg, size,
				 "Invalid arguments for tool %s: \"timeout_seconds\" must be an integer from %d to %d",
				 t->name, SB_TIMEOUT_MIN_S, SB_TIMEOUT_MAX_S);
			return -1;
		}
		timeout = (unsigned)n;
	}
	if (run) {
		run->code = json_string_value(code);
		run->code_len = len;
		run->code_chars = chars;
		run->timeout_s = timeout;
	}
	return 0;
}
