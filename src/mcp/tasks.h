/* MCP Tasks on top of background jobs. A task-augmented tools/call of a
 * tool that allows it (taskSupport "optional": the run tools) starts the
 * code as a background job (runner/jobs/jobs.c) and answers at once with the
 * task; the task's id IS the job's id, so job_status, job_output and
 * job_cancel work on it too, and it has the job's limits (max_jobs,
 * max_jobs_total, job_timeout) and owner.
 *
 * Two eras speak of tasks:
 *   2025-11-25  experimental core tasks: capabilities.tasks, params.task
 *               {ttl}, CreateTaskResult {task}, tasks/get, tasks/result
 *               (blocks until the task ends), tasks/list, tasks/cancel,
 *               notifications/tasks/status; cancelled also by
 *               notifications/cancelled of the creating request;
 *   2026-07-28  the extension io.modelcontextprotocol/tasks (SEP-2663):
 *               the client names it in its per-request capabilities, the
 *               server answers tools/call with {resultType: "task", ...},
 *               tasks/get inlines the result, tasks/update, tasks/cancel.
 *
 * The registry is the server's: a task outlives the client that created it
 * (a closed stdio pipe, an ended HTTP session), as a job does, until its
 * TTL (the client's, at most the task_ttl setting); then its job is
 * stopped if it still runs, its result freed, and a request for it is
 * told that it expired. Tasks are found by owner and id only: another
 * client's task is "not found". */
#ifndef SAGEBOX_MCP_TASKS_H
#define SAGEBOX_MCP_TASKS_H

#include <jansson.h>
#include <stdbool.h>

#include "mcp/request.h"
#include "tools/tool.h"

struct sb_tasks;

#define SB_TASKS_EXTENSION "io.modelcontextprotocol/tasks"
#define SB_TASKS_RELATED_META "io.modelcontextprotocol/related-task"
/* JSON-RPC: Missing Required Client Capability (2026-07-28). */
#define SB_RPC_MISSING_CLIENT_CAPABILITY (-32021)

/* What a task method produced: a result, an error, or nothing yet (a
 * tasks/result that waits; the task answers through the request's sink). */
struct sb_task_reply {
	json_t *result;    /* owned, or NULL */
	int code;          /* a JSON-RPC error code, or 0 */
	char msg[512];
	json_t *data;      /* the error's data (owned), or NULL */
	bool deferred;
};

struct sb_audit;
/* The registry of a server: its tasks' jobs run on tools' runner, audited
 * to audit (NULL: none); both outlive it. */
struct sb_tasks *sb_tasks_new(const struct sb_tool_server *tools, struct sb_audit *audit);
/* Stop the registry's thread and free every task (their jobs end with the
 * runner). */
void sb_tasks_free(struct sb_tasks *t);

/* Whether the request's era defines tasks for this client: 2025-11-25 (the
 * core tasks: sb_rev_tasks_core), or 2026-07-28 with the extension in the
 * request's capabilities. */
bool sb_tasks_ext(const struct sb_mcp_request *q);

/* tools/call with a task: params.task (2025-11-25) or the extension
 * (2026-07-28), for a tool whose arguments were checked. */
void sb_tasks_call(struct sb_tasks *t, const struct sb_mcp_request *q, const struct sb_tool *tool,
		   const json_t *args, struct sb_task_reply *r);

/* tasks/get, tasks/result, tasks/list, tasks/cancel, tasks/update. */
void sb_tasks_get(struct sb_tasks *t, const struct sb_mcp_request *q, struct sb_task_reply *r);
void sb_tasks_result(struct sb_tasks *t, const struct sb_mcp_request *q, struct sb_task_reply *r);
void sb_tasks_list(struct sb_tasks *t, const struct sb_mcp_request *q, struct sb_task_reply *r);
void sb_tasks_cancel(struct sb_tasks *t, const struct sb_mcp_request *q, struct sb_task_reply *r);
void sb_tasks_update(struct sb_tasks *t, const struct sb_mcp_request *q, struct sb_task_reply *r);

/* notifications/cancelled naming the request that created a task
 * (2025-11-25): the task is cancelled. Also drops a tasks/result that
 * waits under that id. Returns whether it found either. */
bool sb_tasks_cancel_request(struct sb_tasks *t, struct sb_mcp_client *c, const json_t *id);
/* A reply stream closed: a tasks/result waiting on it stops waiting. */
void sb_tasks_cancel_stream(struct sb_tasks *t, const void *reply_ctx);
/* The client is going away: nothing is sent to it any more (its tasks go
 * on until their TTL). Waits for a send in progress to it. */
void sb_tasks_client_gone(struct sb_tasks *t, struct sb_mcp_client *c);

#endif
