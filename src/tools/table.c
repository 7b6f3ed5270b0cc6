/* THE table of tools: one row of data per tool. mcp/ lists, checks and calls
 * tools through these rows only; every other mention of a tool's name (the
 * usage text, "the tools are ..." in errors) is generated from here. */
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "tools/run.h"
#include "tools/self_test.h"
#include "tools/status.h"
#include "util/buf.h"

#define STR_(x) #x
#define STR(x) STR_(x)

#define CODE_ARG(what)                                                                                    \
	{.name = "code", .type = SB_ARG_CODE, .required = true, .max = SB_CODE_MAX_CHARS,                 \
	 .description = "The " what " to run, at most " STR(SB_CODE_MAX_CHARS) " characters. Print the "   \
			"values you want to see."}
#define TIMEOUT_ARG                                                                                       \
	{.name = "timeout_seconds", .type = SB_ARG_INTEGER, .min = SB_TIMEOUT_MIN_S, .max = SB_TIMEOUT_MAX_S, \
	 .describe = sb_run_timeout_description}

static const struct sb_tool_arg sage_args[] = {CODE_ARG("Sage code"), TIMEOUT_ARG, {0}};
static const struct sb_tool_arg python_args[] = {CODE_ARG("Python code"), TIMEOUT_ARG, {0}};
static const struct sb_tool_arg shell_args[] = {CODE_ARG("shell script"), TIMEOUT_ARG, {0}};
static const struct sb_tool_arg no_args[] = {{0}};

/* Run tools change nothing on the host but do run arbitrary code each time
 * (not read-only, not idempotent); nothing reaches outside the sandbox
 * (closed world). The status and the self-test only observe. */
static const struct sb_tool_hints runs_code = {.read_only = false, .idempotent = false};
static const struct sb_tool_hints observes = {.read_only = true, .idempotent = true};

const struct sb_tool sb_tools[] = {
	{
		.name = "run_sagemath",
		.title = "Run SageMath",
		.description = sb_run_sage_description,
		.args = sage_args,
		.output_schema = sb_run_output_schema,
		.hints = runs_code,
		.handler = sb_run_handler,
		.needs_slot = true,
		.lang = SB_LANG_SAGE,
	},
	{
		.name = "run_python",
		.title = "Run Python",
		.description = sb_run_python_description,
		.args = python_args,
		.output_schema = sb_run_output_schema,
		.hints = runs_code,
		.handler = sb_run_handler,
		.needs_slot = true,
		.lang = SB_LANG_PYTHON,
	},
	{
		.name = "run_shell",
		.title = "Run shell script",
		.description = sb_run_shell_description,
		.args = shell_args,
		.output_schema = sb_run_output_schema,
		.hints = runs_code,
		.handler = sb_run_handler,
		.needs_slot = true,
		.lang = SB_LANG_SHELL,
	},
	{
		.name = "sandbox_status",
		.title = "Sandbox status",
		.description = sb_status_description,
		.args = no_args,
		.output_schema = sb_status_output_schema,
		.hints = observes,
		.handler = sb_status_handler,
		.needs_slot = false, /* never runs code, so never waits behind jobs */
	},
	{
		.name = "sandbox_self_test",
		.title = "Sandbox self-test",
		.description = sb_self_test_description,
		.args = no_args,
		.output_schema = sb_self_test_output_schema,
		.hints = observes,
		.handler = sb_self_test_handler,
		.needs_slot = true,
	},
};

const size_t sb_tools_count = sizeof sb_tools / sizeof *sb_tools;

const struct sb_tool *sb_tool_find(const char *name)
{
	for (size_t i = 0; name && i < sb_tools_count; i++)
		if (!strcmp(sb_tools[i].name, name))
			return &sb_tools[i];
	return NULL;
}

char *sb_tool_names(void)
{
	struct sb_buf b = {0};
	for (size_t i = 0; i < sb_tools_count; i++)
		sb_buf_printf(&b, "%s%s", i ? ", " : "", sb_tools[i].name);
	return sb_buf_steal(&b, NULL);
}
