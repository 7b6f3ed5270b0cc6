/* THE table of tools: one row of data per tool. mcp/ lists, checks and calls
 * tools through these rows only; every other mention of a tool's name (the
 * usage text, "the tools are ..." in errors) is generated from here. */
#include <stdlib.h>
#include <string.h>

#include "core/interact.h"
#include "core/limits.h"
#include "tools/interact_tool.h"
#include "tools/run.h"
#include "tools/self_test.h"
#include "tools/sessions.h"
#include "tools/status.h"
#include "util/buf.h"
#include "workspaces/store.h"

#define STR_(x) #x
#define STR(x) STR_(x)

#define CODE_ARG(what)                                                                                    \
	{.name = "code", .type = SB_ARG_CODE, .required = true, .max = SB_CODE_MAX_CHARS,                 \
	 .description = "The " what " to run, at most " STR(SB_CODE_MAX_CHARS) " characters. Print the "   \
			"values you want to see."}
#define TIMEOUT_ARG                                                                                       \
	{.name = "timeout_seconds", .type = SB_ARG_INTEGER, .min = SB_TIMEOUT_MIN_S, .max = SB_TIMEOUT_MAX_S, \
	 .describe = sb_run_timeout_description}

#define SESSION_ARG(req)                                                                                  \
	{.name = "session_id", .type = SB_ARG_STRING, .required = req, .max = SB_HANDLE_MAX_CHARS,          \
	 .describe = sb_session_id_description, .header = SB_SESSION_ID_HEADER}
#define JOB_ARG                                                                                           \
	{.name = "job_id", .type = SB_ARG_STRING, .required = true, .max = SB_HANDLE_MAX_CHARS,             \
	 .description = "A job_id that job_start returned.", .header = SB_JOB_ID_HEADER}
#define PATH_ARG(req, what)                                                                               \
	{.name = "path", .type = SB_ARG_STRING, .required = req, .max = 4096, .description = what}

const char *const sb_tools_langs[] = {"sage", "python", "shell", NULL};

static const struct sb_tool_arg sage_args[] = {CODE_ARG("Sage code"), TIMEOUT_ARG, SESSION_ARG(false), {0}};
static const struct sb_tool_arg python_args[] = {CODE_ARG("Python code"), TIMEOUT_ARG, SESSION_ARG(false), {0}};
static const struct sb_tool_arg shell_args[] = {CODE_ARG("shell script"), TIMEOUT_ARG, SESSION_ARG(false), {0}};
static const struct sb_tool_arg no_args[] = {{0}};
static const struct sb_tool_arg open_args[] = {
	{.name = "lang", .type = SB_ARG_STRING, .choices = sb_tools_langs,
	 .description = "The session's language, fixed for its life: sage (the default; takes run_sagemath and "
			"run_python), python (run_python) or shell (run_shell)."},
	{.name = "workspace", .type = SB_ARG_STRING, .max = SB_WS_NAME_MAX, .describe = sb_session_workspace_description},
	{.name = "restore", .type = SB_ARG_BOOLEAN,
	 .description = "With workspace: load the variables session_save (or the last close) saved there "
			"(default false). The result lists what was restored and what could not be."},
	{0}};
static const struct sb_tool_arg session_args[] = {SESSION_ARG(true), {0}};
static const struct sb_tool_arg write_args[] = {
	SESSION_ARG(true),
	PATH_ARG(true, "The file, relative to /work or under /work/ (missing directories are created)."),
	{.name = "content", .type = SB_ARG_STRING, .description = "The file's text (UTF-8). Give this or content_base64."},
	{.name = "content_base64", .type = SB_ARG_STRING,
	 .description = "The file's bytes in base64, for binary data. Give this or content."},
	{.name = "append", .type = SB_ARG_BOOLEAN,
	 .description = "Append to the file instead of replacing it (default false)."},
	{0}};
static const struct sb_tool_arg read_args[] = {
	SESSION_ARG(true),
	PATH_ARG(true, "The file, relative to /work or under /work/."),
	{.name = "offset", .type = SB_ARG_INTEGER, .min = 0, .max = 1LL << 50,
	 .description = "The first byte to read (default 0)."},
	{.name = "length", .type = SB_ARG_INTEGER, .min = 1, .max = 1LL << 50,
	 .description = "How many bytes to read at most (default and most: the output limit per call)."},
	{0}};
static const struct sb_tool_arg list_args[] = {
	SESSION_ARG(true), PATH_ARG(false, "The directory, relative to /work or under /work/ (default /work)."), {0}};
static const struct sb_tool_arg export_args[] = {
	SESSION_ARG(true), PATH_ARG(true, "The workspace file to copy to the user's computer."), {0}};
static const struct sb_tool_arg job_start_args[] = {
	{.name = "lang", .type = SB_ARG_STRING, .required = true, .choices = sb_tools_langs,
	 .description = "sage, python or shell (with session_id: the session's language; python also in a sage "
			"session)."},
	CODE_ARG("code"),
	{.name = "session_id", .type = SB_ARG_STRING, .max = SB_HANDLE_MAX_CHARS,
	 .description = "Run the job in this session's sandbox, seeing its variables and files. Omit for a "
			"sandbox of the job's own.", .header = SB_SESSION_ID_HEADER},
	{.name = "timeout_seconds", .type = SB_ARG_INTEGER, .min = 1, .max = 86400,
	 .describe = sb_job_timeout_description},
	{0}};
static const struct sb_tool_arg interact_args[] = {
	{.name = "session_id", .type = SB_ARG_STRING, .required = true, .max = SB_HANDLE_MAX_CHARS,
	 .description = "The session whose call displayed the interact (the result's session_id).",
	 .header = SB_SESSION_ID_HEADER},
	{.name = "interact_id", .type = SB_ARG_STRING, .required = true, .max = SB_HANDLE_MAX_CHARS,
	 .description = "The interact's id, from its display item."},
	{.name = "values", .type = SB_ARG_OBJECT, .required = true, .max = SB_INTERACT_MAX_CONTROLS,
	 .description = "The controls' values by name (a control left out keeps its default)."},
	{0}};
static const struct sb_tool_arg job_args[] = {JOB_ARG, {0}};
static const struct sb_tool_arg job_output_args[] = {
	JOB_ARG,
	{.name = "offset", .type = SB_ARG_INTEGER, .min = 0, .max = 1LL << 50,
	 .description = "Where to start: 0 (the default), or the next_offset of the previous job_output."},
	{0}};

/* Run tools change nothing on the host but do run arbitrary code each time
 * (not read-only, not idempotent); nothing reaches outside the sandbox
 * (closed world). The status and the self-test only observe. */
#define RUNS_CODE {.read_only = false, .idempotent = false}
#define OBSERVES {.read_only = true, .idempotent = true}
#define CHANGES {.read_only = false, .idempotent = false}
#define ENDS {.read_only = false, .destructive = true, .idempotent = true}
#define OVERWRITES {.read_only = false, .destructive = true, .idempotent = true}

/* A row of the run tools (tools/run.h): one handler for all three, the
 * row's lang says which interpreter runs the code; each may run as a task
 * and waits for a job slot. */
#define RUN_TOOL(nm, ttl, what, arguments, language, ...)                                                   \
	{.name = nm, .title = ttl, .description = sb_run_##what##_description, .args = arguments,               \
	 .output_schema = sb_run_output_schema, .hints = RUNS_CODE, .handler = sb_run_handler, .needs_slot = true, \
	 .task_support = true, .lang = language, __VA_ARGS__}

/* A row of the session, file and job tools (tools/sessions.h). */
#define SESSION_TOOL(nm, ttl, what, arguments, chk, hint, ...)                                            \
	{.name = nm, .title = ttl, .description = sb_##what##_description, .args = arguments, .check = chk,     \
	 .output_schema = sb_tools_open_schema, .hints = hint, .handler = sb_##what##_handler, .needs_slot = false, \
	 __VA_ARGS__}

const struct sb_tool sb_tools[] = {
	RUN_TOOL("run_sagemath", "Run SageMath", sage, sage_args, SB_LANG_SAGE, .viewed = true),
	RUN_TOOL("run_python", "Run Python", python, python_args, SB_LANG_PYTHON, .viewed = true),
	RUN_TOOL("run_shell", "Run shell script", shell, shell_args, SB_LANG_SHELL),
	{
		.name = "sandbox_status",
		.title = "Sandbox status",
		.description = sb_status_description,
		.args = no_args,
		.output_schema = sb_status_output_schema,
		.hints = OBSERVES,
		.handler = sb_status_handler,
		.needs_slot = false, /* never runs code, so never waits behind jobs */
	},
	{
		.name = "sandbox_self_test",
		.title = "Sandbox self-test",
		.description = sb_self_test_description,
		.args = no_args,
		.output_schema = sb_self_test_output_schema,
		.hints = OBSERVES,
		.handler = sb_self_test_handler,
		.needs_slot = true,
	},
	{
		.name = "interact_update",
		.title = "Move an interact's controls",
		.description = sb_interact_update_description,
		.args = interact_args,
		.output_schema = sb_run_output_schema,
		.hints = RUNS_CODE,
		.handler = sb_interact_update_handler,
		.needs_slot = true,
		.viewed = true,
		.app_only = true,
	},
	SESSION_TOOL("session_open", "Open a session", session_open, open_args, NULL, CHANGES, .opens = true),
	SESSION_TOOL("session_list", "List sessions", session_list, no_args, NULL, OBSERVES),
	SESSION_TOOL("session_save", "Save a session's variables", session_save, session_args, NULL, CHANGES),
	SESSION_TOOL("workspace_list", "List workspaces", workspace_list, no_args, NULL, OBSERVES),
	SESSION_TOOL("session_reset", "Reset a session", session_reset, session_args, NULL, ENDS),
	SESSION_TOOL("session_close", "Close a session", session_close, session_args, NULL, ENDS),
	SESSION_TOOL("file_write", "Write a workspace file", file_write, write_args, sb_file_write_check, OVERWRITES),
	SESSION_TOOL("file_read", "Read a workspace file", file_read, read_args, NULL, OBSERVES),
	SESSION_TOOL("file_list", "List workspace files", file_list, list_args, NULL, OBSERVES),
	SESSION_TOOL("file_export", "Export a workspace file", file_export, export_args, NULL, CHANGES),
	SESSION_TOOL("job_start", "Start a background job", job_start, job_start_args, NULL, CHANGES, .opens = true),
	SESSION_TOOL("job_status", "Background job status", job_status, job_args, NULL, OBSERVES),
	SESSION_TOOL("job_output", "Background job output", job_output, job_output_args, NULL, OBSERVES, .viewed = true),
	SESSION_TOOL("job_cancel", "Cancel a background job", job_cancel, job_args, NULL, ENDS),
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
		if (!sb_tools[i].app_only) /* (the viewer's own: not for a model, nor a person) */
			sb_buf_printf(&b, "%s%s", b.len ? ", " : "", sb_tools[i].name);
	return sb_buf_steal(&b, NULL);
}
