/* What a task looks like on the wire, per era (mcp/tasks.h): the Task
 * object of 2025-11-25 (ttl, pollInterval) and of the 2026-07-28 extension
 * (ttlMs, pollIntervalMs, the result or error inlined), and the
 * CallToolResult a finished background job gives a task. */
#ifndef SAGEBOX_MCP_TASKS_VIEW_H
#define SAGEBOX_MCP_TASKS_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* How often a client should poll, in ms. */
#define SB_TASK_POLL_MS 1000

/* A task's facts, as the registry knows them. */
struct sb_task_facts {
	const char *id;
	const char *status;       /* working, completed, failed, cancelled */
	const char *message;      /* statusMessage, or "" */
	uint64_t created_ms, updated_ms, ttl_ms; /* wall-clock ms since the epoch; ttl in ms */
	const json_t *result;     /* the CallToolResult once the job ended, or NULL */
	const json_t *error;      /* 2026: a failed task's JSON-RPC error {code, message}, or NULL */
};

/* The Task object (new reference). modern: the 2026-07-28 extension's
 * names, with result or error inlined when detailed. */
json_t *sb_task_json(const struct sb_task_facts *f, bool modern, bool detailed);

/* The CallToolResult of a job that ended: st is sb_job_status's object,
 * out sb_job_output's first page (may be NULL), cut its size. */
json_t *sb_task_job_result(const json_t *st, const json_t *out, size_t cut);

#endif
