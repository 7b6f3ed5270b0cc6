/* Unit tests of the tools layer: the table's rows, the argument check and
 * the input schema built from a row's argument table, and the tools as
 * tools/list shows them per protocol revision. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config/config.h"
#include "mcp/toolview.h"
#include "tools/sessions.h"
#include "tools/tool.h"

static void test_table(void)
{
	CHECK(sb_tools_count == 20);
	for (size_t i = 0; i < sb_tools_count; i++) {
		const struct sb_tool *t = &sb_tools[i];
		CHECK(t->name && t->title && t->description && t->args && t->output_schema && t->handler);
		CHECK(sb_tool_find(t->name) == t);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(t->name, sb_tools[j].name) != 0);
	}
	const struct sb_tool *t = sb_tool_find("run_sagemath");
	CHECK(t && t->lang == SB_LANG_SAGE && t->needs_slot && sb_tool_code_arg(t));
	CHECK(!sb_tool_find("run_sage"));
	CHECK(!sb_tool_find(NULL));
	const struct sb_tool *st = sb_tool_find("sandbox_status");
	CHECK(st && !st->needs_slot && !sb_tool_code_arg(st) && st->hints.read_only);
	char *names = sb_tool_names();
	CHECK(names && !strcmp(names, "run_sagemath, run_python, run_shell, sandbox_status, sandbox_self_test, "
				      "session_open, session_list, session_save, workspace_list, session_reset, session_close, "
				      "file_write, file_read, "
				      "file_list, file_export, job_start, job_status, job_output, job_cancel"));
	free(names);
	/* The session, file and job tools never wait for a job slot. */
	for (const char *const *n = (const char *const[]){"session_open", "file_write", "job_start", "job_output", NULL};
	     *n; n++)
		CHECK(sb_tool_find(*n) && !sb_tool_find(*n)->needs_slot);
	CHECK(sb_tool_find("session_list")->hints.read_only && sb_tool_find("session_close")->hints.destructive);
	/* The viewer's tool: app-only, a run in a session (a job slot), its
	 * values an object recorded in the audit log like code. */
	const struct sb_tool *iu = sb_tool_find("interact_update");
	CHECK(iu && iu->app_only && iu->needs_slot && !iu->task_support && !sb_tool_code_arg(iu));
	for (size_t i = 0; i < sb_tools_count; i++)
		CHECK(!sb_tools[i].app_only || &sb_tools[i] == iu);
	char msg[300];
	json_t *a = json_pack("{s:s, s:s, s:{s:i}}", "session_id", "s_1", "interact_id", "i1", "values", "n", 3);
	CHECK(sb_tool_check_args(iu, a, msg, sizeof msg) == 0);
	size_t len;
	char *owned;
	const char *text = sb_tool_audited_text(iu, a, &len, &owned);
	CHECK(text && owned == text && !strcmp(text, "{\"n\":3}") && len == 7);
	free(owned);
	json_object_set_new(a, "values", json_string("{\"n\":3}"));
	CHECK(sb_tool_check_args(iu, a, msg, sizeof msg) == -1);
	CHECK(strstr(msg, "\"values\" must be an object") != NULL);
	json_decref(a);
	json_t *schema = sb_tool_input_schema(iu, NULL, true);
	json_t *values = json_object_get(json_object_get(schema, "properties"), "values");
	CHECK(!strcmp(json_string_value(json_object_get(values, "type")), "object") &&
	      json_integer_value(json_object_get(values, "maxProperties")) == 64);
	/* a router sends it to the session's instance, as any session call */
	json_t *sid = json_object_get(json_object_get(schema, "properties"), "session_id");
	CHECK(!strcmp(json_string_value(json_object_get(sid, "x-mcp-header")), SB_SESSION_ID_HEADER));
	json_decref(schema);
	/* Workspaces: the model lists and saves; deleting is the user's (no tool). */
	CHECK(sb_tool_find("workspace_list")->hints.read_only && !sb_tool_find("session_save")->hints.destructive);
	CHECK(!sb_tool_find("workspace_rm") && !sb_tool_find("workspace_delete") && !sb_tool_find("workspace_export"));
}

/* Choices, booleans, and a row's own rule (file_write: one of two). */
static void test_session_args(void)
{
	char msg[512];
	const struct sb_tool *o = sb_tool_find("session_open");
	json_t *a = json_pack("{s:s}", "lang", "shell");
	CHECK(sb_tool_check_args(o, a, msg, sizeof msg) == 0);
	json_decref(a);
	a = json_pack("{s:s}", "lang", "bash");
	CHECK(sb_tool_check_args(o, a, msg, sizeof msg) < 0);
	CHECK(!strcmp(msg, "Invalid arguments for tool session_open: \"lang\" must be one of \"sage\", \"python\", \"shell\""));
	json_decref(a);
	CHECK(sb_tool_check_args(o, NULL, msg, sizeof msg) == 0);
	const struct sb_tool *w = sb_tool_find("file_write");
	a = json_pack("{s:s, s:s, s:s, s:b}", "session_id", "s_1", "path", "a", "content", "x", "append", 1);
	CHECK(sb_tool_check_args(w, a, msg, sizeof msg) == 0);
	json_decref(a);
	a = json_pack("{s:s, s:s, s:s, s:s}", "session_id", "s_1", "path", "a", "content", "x", "content_base64", "eA==");
	CHECK(sb_tool_check_args(w, a, msg, sizeof msg) < 0);
	CHECK(strstr(msg, "exactly one of") != NULL);
	json_decref(a);
	a = json_pack("{s:s, s:s}", "session_id", "s_1", "path", "a");
	CHECK(sb_tool_check_args(w, a, msg, sizeof msg) < 0);
	json_decref(a);
	a = json_pack("{s:s, s:s, s:s, s:s}", "session_id", "s_1", "path", "a", "content", "x", "append", "yes");
	CHECK(sb_tool_check_args(w, a, msg, sizeof msg) < 0);
	CHECK(strstr(msg, "\"append\" must be true or false") != NULL);
	json_decref(a);
	/* a session id with a NUL is refused like any text argument */
	a = json_pack("{s:s, s:s#}", "code", "1", "session_id", "s_\0x", (size_t)4);
	CHECK(sb_tool_check_args(sb_tool_find("run_python"), a, msg, sizeof msg) < 0);
	json_decref(a);
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	json_t *sch = sb_tool_input_schema(o, &cfg, false);
	char *s = json_dumps(json_object_get(json_object_get(sch, "properties"), "lang"), JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR_CONTAINS(s, "\"enum\":[\"sage\",\"python\",\"shell\"]");
	free(s);
	json_decref(sch);
	char *ins = sb_tools_instructions(&cfg);
	CHECK_STR_CONTAINS(ins, "session_open");
	CHECK_STR_CONTAINS(ins, "30 minutes");
	free(ins);
}

static void test_args(void)
{
	const struct sb_tool *t = sb_tool_find("run_sagemath");
	char msg[512];

	json_t *a = json_pack("{s:s}", "code", "print(1)");
	CHECK(sb_tool_check_args(t, a, msg, sizeof msg) == 0 && sb_tool_arg_int(a, "timeout_seconds", 30) == 30);
	json_decref(a);
	a = json_pack("{s:s, s:f}", "code", "1", "timeout_seconds", 5.0);
	CHECK(sb_tool_check_args(t, a, msg, sizeof msg) == 0 && sb_tool_arg_int(a, "timeout_seconds", 30) == 5);
	json_decref(a);
	a = json_pack("{s:s, s:f}", "code", "1", "timeout_seconds", 5.5);
	CHECK(sb_tool_check_args(t, a, msg, sizeof msg) < 0);
	json_decref(a);
	a = json_pack("{s:s, s:i}", "code", "1", "timeout_seconds", 601);
	CHECK(sb_tool_check_args(t, a, msg, sizeof msg) < 0);
	CHECK(!strcmp(msg, "Invalid arguments for tool run_sagemath: \"timeout_seconds\" must be an integer from 1 to 600"));
	json_decref(a);
	a = json_pack("{s:s, s:b}", "code", "1", "x", 1);
	CHECK(sb_tool_check_args(t, a, msg, sizeof msg) < 0);
	CHECK(!strcmp(msg, "Invalid arguments for tool run_sagemath: unknown argument \"x\" (allowed: code, timeout_seconds, session_id)"));
	json_decref(a);
	CHECK(sb_tool_check_args(t, NULL, msg, sizeof msg) < 0);
	CHECK(!strcmp(msg, "Invalid arguments for tool run_sagemath: missing required argument \"code\""));
	a = json_array();
	CHECK(sb_tool_check_args(t, a, msg, sizeof msg) < 0);
	CHECK(strstr(msg, "\"arguments\" must be an object") != NULL);
	json_decref(a);
	/* Code may hold a NUL: it travels with its length. */
	a = json_object();
	json_object_set_new(a, "code", json_stringn("a\0b", 3));
	CHECK(sb_tool_check_args(t, a, msg, sizeof msg) == 0);
	size_t len = 0;
	CHECK(sb_tool_arg_text(a, "code", &len) && len == 3);
	json_decref(a);

	/* 50,000 four-byte characters pass; one more does not. */
	size_t n = 50000;
	char *big = malloc(4 * (n + 1) + 1);
	for (size_t i = 0; i <= n; i++)
		memcpy(big + 4 * i, "\xf0\x9f\x98\x80", 4);
	a = json_object();
	json_object_set_new(a, "code", json_stringn(big, 4 * n));
	CHECK(sb_tool_check_args(t, a, msg, sizeof msg) == 0);
	json_object_set_new(a, "code", json_stringn(big, 4 * (n + 1)));
	CHECK(sb_tool_check_args(t, a, msg, sizeof msg) < 0);
	CHECK(!strcmp(msg, "Invalid arguments for tool run_sagemath: \"code\" is 50001 characters long; the limit is "
			   "50000. Split the work into several calls."));
	json_decref(a);
	free(big);

	const struct sb_tool *st = sb_tool_find("sandbox_status");
	CHECK(sb_tool_check_args(st, NULL, msg, sizeof msg) == 0);
	a = json_pack("{s:b}", "verbose", 1);
	CHECK(sb_tool_check_args(st, a, msg, sizeof msg) < 0);
	CHECK(strstr(msg, "(this tool takes no arguments)") != NULL);
	json_decref(a);
}

/* A row as the session tools have them: a text argument (a session id
 * or a path) is used as a C string, so a NUL in it is refused. */
static const struct sb_tool_arg text_args[] = {
	{.name = "session_id", .type = SB_ARG_STRING, .required = true, .max = 64, .description = "A session."},
	{.name = "offset", .type = SB_ARG_INTEGER, .min = 0, .max = 1000},
	{0},
};
static const struct sb_tool text_tool = {.name = "probe", .title = "Probe", .args = text_args};

static void test_text_args(void)
{
	char msg[512];
	json_t *a = json_pack("{s:s}", "session_id", "s_1");
	CHECK(sb_tool_check_args(&text_tool, a, msg, sizeof msg) == 0);
	json_object_set_new(a, "session_id", json_stringn("s_1\0../x", 8));
	CHECK(sb_tool_check_args(&text_tool, a, msg, sizeof msg) < 0);
	CHECK(!strcmp(msg, "Invalid arguments for tool probe: \"session_id\" contains a NUL character (\\u0000), "
			   "which is not allowed here"));
	json_object_set_new(a, "session_id", json_integer(1));
	CHECK(sb_tool_check_args(&text_tool, a, msg, sizeof msg) < 0);
	CHECK(strstr(msg, "\"session_id\" must be a string") != NULL);
	json_decref(a);

	struct sb_config cfg;
	sb_config_defaults(&cfg);
	json_t *schema = sb_tool_input_schema(&text_tool, &cfg, false);
	char *s = json_dumps(schema, JSON_COMPACT);
	CHECK(s && !strcmp(s, "{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\",\"maxLength\":64,"
			      "\"description\":\"A session.\"},\"offset\":{\"type\":\"integer\",\"minimum\":0,"
			      "\"maximum\":1000}},\"required\":[\"session_id\"],\"additionalProperties\":false}"));
	free(s);
	json_decref(schema);
}

/* A rule the argument table cannot state (file_write takes
 * content or content_base64, not both): the row's check runs last. */
static int one_of(const struct sb_tool *t, const json_t *args, char *msg, size_t size)
{
	if (!json_object_get(args, "content") == !json_object_get(args, "content_base64")) {
		snprintf(msg, size, "Invalid arguments for tool %s: give exactly one of content, content_base64", t->name);
		return -1;
	}
	return 0;
}

static const struct sb_tool_arg file_args[] = {
	{.name = "content", .type = SB_ARG_CODE},
	{.name = "content_base64", .type = SB_ARG_STRING},
	{0},
};
static const struct sb_tool file_tool = {.name = "writer", .title = "Writer", .args = file_args, .check = one_of};

static void test_row_check(void)
{
	char msg[512];
	json_t *a = json_pack("{s:s}", "content", "x");
	CHECK(sb_tool_check_args(&file_tool, a, msg, sizeof msg) == 0);
	json_object_set_new(a, "content_base64", json_string("eA=="));
	CHECK(sb_tool_check_args(&file_tool, a, msg, sizeof msg) < 0);
	CHECK(strstr(msg, "exactly one of") != NULL);
	json_decref(a);
	CHECK(sb_tool_check_args(&file_tool, NULL, msg, sizeof msg) < 0);
	/* The table's own checks come first. */
	a = json_pack("{s:i}", "content", 5);
	CHECK(sb_tool_check_args(&file_tool, a, msg, sizeof msg) < 0);
	CHECK(strstr(msg, "\"content\" must be a string") != NULL);
	json_decref(a);
}

static void test_list(void)
{
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	json_t *old = sb_mcp_tools_list(&cfg, "2024-11-05");
	json_t *mid = sb_mcp_tools_list(&cfg, "2025-03-26");
	json_t *now = sb_mcp_tools_list(&cfg, "2025-06-18");
	json_t *t0 = json_array_get(json_object_get(old, "tools"), 0);
	json_t *t1 = json_array_get(json_object_get(mid, "tools"), 0);
	json_t *t2 = json_array_get(json_object_get(now, "tools"), 0);
	CHECK(json_array_size(json_object_get(now, "tools")) == 20);
	CHECK(!json_object_get(t0, "annotations") && !json_object_get(t0, "title") && !json_object_get(t0, "outputSchema"));
	CHECK(json_object_get(t1, "annotations") && !json_object_get(t1, "title") && !json_object_get(t1, "outputSchema"));
	CHECK(json_object_get(t2, "annotations") && json_object_get(t2, "title") && json_object_get(t2, "outputSchema"));
	CHECK(json_is_false(json_object_get(json_object_get(t2, "inputSchema"), "additionalProperties")));
	CHECK_STR_CONTAINS(json_string_value(json_object_get(t2, "description")), "R.<x> = QQ[]");
	json_t *status = json_array_get(json_object_get(now, "tools"), 3);
	char *s = json_dumps(json_object_get(status, "inputSchema"), JSON_COMPACT);
	CHECK(s && !strcmp(s, "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}"));
	free(s);
	json_decref(old);
	json_decref(mid);
	json_decref(now);
}

/* session_open and job_start state both limits a client meets: its own and
 * the server-wide total (a model told only "at most 4" would not know why
 * its fifth, or another client's, open is refused). */
static void test_limits_in_descriptions(void)
{
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	cfg.max_sessions = 3;
	cfg.max_sessions_total = 7;
	cfg.max_jobs = 2;
	cfg.max_jobs_total = 9;
	json_t *list = sb_mcp_tools_list(&cfg, "2025-06-18");
	size_t i;
	json_t *t;
	int seen = 0;
	json_array_foreach(json_object_get(list, "tools"), i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		const char *d = json_string_value(json_object_get(t, "description"));
		if (!strcmp(name, "session_open")) {
			CHECK_STR_CONTAINS(d, "at most 3 of yours may be open (7 of all clients together)");
			seen++;
		} else if (!strcmp(name, "job_start")) {
			CHECK_STR_CONTAINS(d, "at most 2 of yours at once (9 of all clients together)");
			seen++;
		}
	}
	CHECK(seen == 2);
	json_decref(list);
}

int main(void)
{
	test_table();
	test_args();
	test_session_args();
	test_text_args();
	test_row_check();
	test_list();
	test_limits_in_descriptions();
	return check_summary();
}
