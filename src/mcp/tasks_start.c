/* Creating a task: a task-augmented tools/call starts the code as a
 * background job through the runner's one entry, and answers at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/jsonrpc.h"
#include "mcp/tasks.h"
#include "mcp/tasks_reg.h"
#include "mcp/toolview.h"
#include "runner/runner.h"
#include "tools/sessions.h"
#include "util/clock.h"
#include "util/utf8.h"

/* The shortest TTL granted, whatever a client asks. */
#define MIN_TTL_MS 1000

/* ---- creating a task */

/* The TTL granted: the asked one (ms), within MIN_TTL_MS and task_ttl. */
static uint64_t grant_ttl(const struct sb_config *cfg, const json_t *asked)
{
	uint64_t most = (uint64_t)cfg->task_ttl_s * 1000;
	if (!json_is_number(asked))
		return most;
	double v = json_number_value(asked);
	if (v < MIN_TTL_MS)
		return MIN_TTL_MS;
	return v >= (double)most ? most : (uint64_t)v;
}

/* The audit lines a background job's start has (as job_start's). */
static void audit_start(struct sb_audit *audit, const struct sb_mcp_request *q, const struct sb_tool *tool,
			const json_t *args, struct sb_audit_record *rec)
{
	rec->client = q->client->owner;
	rec->client_info = q->info ? q->info : q->client->info;
	rec->tool = tool->name;
	sb_audit_call_id(rec->call);
	rec->code = sb_tool_arg_text(args, "code", &rec->code_len);
	if (rec->code)
		rec->code_chars = sb_utf8_count(rec->code, rec->code_len);
	const char *sid = sb_tool_arg_text(args, "session_id", NULL);
	snprintf(rec->session, sizeof rec->session, "%s", sid ? sid : "");
	if (audit)
		sb_audit_started(audit, rec);
}

/* Start the job; 0 with its id, or -1 with r->result an error CallToolResult. */
static int start_job(struct sb_tasks *t, const struct sb_mcp_request *q, const struct sb_tool *tool,
		     const json_t *args, char id[SB_SESSION_ID_LEN], unsigned *timeout, struct sb_task_reply *r)
{
	const struct sb_tool_server *tools = t->tools;
	const struct sb_config *cfg = tools->cfg;
	struct sb_audit_record rec = {0};
	audit_start(t->audit, q, tool, args, &rec);
	struct sb_tool_ctx ctx = {.srv = tools, .owner = q->client->owner, .revision = q->revision,
				  .hooks = {.cancel_fd = -1}, .audit = &rec};
	struct sb_tool_result res = {0};
	struct sb_error err = {0};
	long long asked = sb_tool_arg_int(args, "timeout_seconds", cfg->job_timeout_s);
	*timeout = (unsigned)asked;
	rec.timeout_s = *timeout;
	if (asked > cfg->job_timeout_s) {
		sb_fail(&err, "timeout_seconds is %lld; a task is a background job, which may run at most %u s here "
			      "(the job_timeout setting)", asked, cfg->job_timeout_s);
		sb_hint(&err, "pass a timeout_seconds of at most %u, or call without a task", cfg->job_timeout_s);
		sb_tools_error(&ctx, &res, &err);
	} else {
		/* The runner's one entry, as job_start (tools/job_tools.c). */
		struct sb_job job = {.kind = SB_JOB_BACKGROUND, .owner = q->client->owner, .lang = tool->lang,
				     .session = sb_tool_arg_text(args, "session_id", NULL), .limits = cfg->limits};
		job.code = sb_tool_arg_text(args, "code", &job.code_len);
		job.limits.timeout_s = *timeout;
		struct sb_run_out ro = {0};
		if (!tools->runner || sb_runner_run(tools->runner, &job, NULL, &ro)) {
			if (!tools->runner || ro.unusable)
				sb_tools_unusable(&ctx, &res, &ro.err);
			else
				sb_tools_error(&ctx, &res, &ro.err);
		} else {
			snprintf(id, SB_SESSION_ID_LEN, "%s", ro.job_id);
			snprintf(rec.job, sizeof rec.job, "%s", id);
			snprintf(rec.verdict, sizeof rec.verdict, "started as task (background job %s)", id);
			rec.ok = true;
		}
		sb_run_out_free(&ro);
	}
	if (t->audit)
		sb_audit_finished(t->audit, &rec);
	if (!rec.ok) {
		r->result = sb_mcp_call_result(&res, q->revision);
		return -1;
	}
	sb_tool_result_free(&res);
	return 0;
}

void sb_tasks_call(struct sb_tasks *t, const struct sb_mcp_request *q, const struct sb_tool *tool,
		   const json_t *args, struct sb_task_reply *r)
{
	bool modern = q->modern;
	const json_t *asked = NULL;
	if (!modern) {
		const json_t *task = json_object_get(q->params, "task");
		asked = json_object_get(task, "ttl");
		if (!json_is_object(task) || (asked && !json_is_null(asked) && (!json_is_number(asked) ||
										  json_number_value(asked) < 0))) {
			tk_failf(r, SB_RPC_INVALID_PARAMS, "Invalid params: \"task\" must be an object whose \"ttl\", if "
							"given, is a number of milliseconds (0 or more)");
			return;
		}
		if (!tool->task_support) {
			tk_failf(r, SB_RPC_METHOD_NOT_FOUND, "Method not found: the tool %s cannot run as a task (its "
							  "execution.taskSupport is \"forbidden\"); call it without "
							  "\"task\"", tool->name);
			return;
		}
	}
	char id[SB_SESSION_ID_LEN];
	unsigned timeout;
	if (start_job(t, q, tool, args, id, &timeout, r))
		return;
	struct task *k = calloc(1, sizeof *k);
	if (!k) {
		struct sb_error err = {0};
		struct sb_sessions *ss = tk_sessions(t);
		if (ss)
			sb_job_cancel(ss, q->client->owner, id, &err);
		tk_failf(r, SB_RPC_INTERNAL_ERROR, "Internal error: out of memory");
		return;
	}
	snprintf(k->id, sizeof k->id, "%s", id);
	snprintf(k->owner, sizeof k->owner, "%s", q->client->owner);
	k->created_ms = k->updated_ms = tk_wall_ms();
	k->born_ms = sb_now_ms();
	k->ttl_ms = grant_ttl(t->tools->cfg, asked);
	k->state = T_WORKING;
	snprintf(k->message, sizeof k->message, "running as background job %s (at most %u s)", id, timeout);
	if (!modern) {
		k->client = q->client;
		k->req_id = json_deep_copy(q->id);
		k->req_scoped = q->id_scope != NULL;
	}

	pthread_mutex_lock(&t->lock);
	tk_add_locked(t, k);
	json_t *task = tk_task_json(k, modern, false);
	pthread_mutex_unlock(&t->lock);

	char immediate[400];
	snprintf(immediate, sizeof immediate, "Started as background job %s (at most %u s); the client will fetch "
					      "its result. Meanwhile job_status and job_output with this job_id "
					      "show how it goes.", id, timeout);
	if (modern) {
		r->result = task;
		json_object_set_new(r->result, "resultType", json_string("task"));
	} else {
		r->result = json_pack("{s:o, s:{s:s}}", "task", task, "_meta",
				      "io.modelcontextprotocol/model-immediate-response", immediate);
	}
	sb_mcp_log_req(NULL, -1, SB_LOG_INFO, "%s: started as task %s (TTL %llu ms)", tool->name, id,
		       (unsigned long long)k->ttl_ms);
}

