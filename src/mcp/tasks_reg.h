/* The task registry's insides, shared by its files (internal to src/mcp/):
 * tasks.c (the tasks, their watcher thread, what is sent once the lock is
 * let go), tasks_start.c (a task-augmented tools/call starts one) and
 * tasks_methods.c (tasks/get, result, list, cancel, update; cancelled
 * requests and gone clients). The API is mcp/tasks.h. */
#ifndef SAGEBOX_MCP_TASKS_REG_H
#define SAGEBOX_MCP_TASKS_REG_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mcp/audit.h"
#include "mcp/request.h"
#include "runner/jobs/jobs.h"
#include "runner/sessions/sessions.h"
#include "tools/tool.h"

struct sb_task_reply;

enum tstate { T_WORKING, T_COMPLETED, T_FAILED, T_CANCELLED };

/* A tasks/result waiting for its task to end (2025-11-25). */
struct waiter {
	struct sb_mcp_client *client;
	json_t *id;
	const void *scope;
	struct sb_mcp_sink reply;
	struct waiter *next;
};

struct task {
	char id[SB_SESSION_ID_LEN];        /* the job's id */
	char owner[SB_OWNER_MAX];
	uint64_t created_ms, updated_ms;   /* wall clock: what the protocol reports */
	uint64_t born_ms, ttl_ms;          /* monotonic: when its TTL and tombstone end */
	enum tstate state;                 /* as 2025-11-25 names it */
	bool tool_error;                   /* the job ended, not ok (2025-11-25: failed; 2026: completed) */
	bool ended;                        /* the job ended and result is set (or the job is gone) */
	bool expired;                      /* past its TTL: a tombstone */
	char message[600];
	json_t *result;                    /* the CallToolResult, once ended */
	struct sb_mcp_client *client;      /* notifications/tasks/status go to it (2025-11-25); NULL: gone */
	json_t *req_id;                    /* the creating request's id (notifications/cancelled) */
	bool req_scoped;
	struct waiter *waiters;
	struct task *next;
};

/* A message to send once the lock is let go. */
struct outmsg {
	struct sb_mcp_sink sink;
	json_t *msg;                       /* NULL: only done */
	bool done;
	struct outmsg *next;
};

struct sb_tasks {
	const struct sb_tool_server *tools; /* settings, runner: what a task's job runs on */
	struct sb_audit *audit;            /* NULL: no audit log */
	pthread_mutex_t lock;
	pthread_cond_t wake;               /* a task was created, or stop (monotonic: sb_cond_init) */
	pthread_cond_t sent;               /* sending went down */
	struct task *list;
	unsigned sending;                  /* flushes in progress (client_gone waits for 0) */
	bool stop, started;
	pthread_t thread;
};

/* "working", "completed", "failed", "cancelled": by enum tstate, as 2025-11-25 names them. */
extern const char *const tk_state_names[];

/* Wall-clock ms since the epoch: only for what a task reports. */
uint64_t tk_wall_ms(void);
void tk_failf(struct sb_task_reply *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The runner's sessions and jobs (NULL: not usable here). */
struct sb_sessions *tk_sessions(struct sb_tasks *t);

/* Under t->lock: */
struct task *tk_find_locked(struct sb_tasks *t, const char *owner, const char *id);
json_t *tk_task_json(const struct task *k, bool modern, bool detailed);
/* A message for later (tk_flush_locked sends the box without the lock). */
void tk_queue(struct outmsg **box, const struct sb_mcp_sink *sink, json_t *msg, bool done);
void tk_flush_locked(struct sb_tasks *t, struct outmsg *box);
/* tasks/result's answer for an ended task. */
json_t *tk_final_result(const struct task *k);
void tk_answer_waiters_locked(struct task *k, struct outmsg **box);
void tk_set_state_locked(struct task *k, enum tstate st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* List a new task and wake (or start) the watcher. */
void tk_add_locked(struct sb_tasks *t, struct task *k);

#endif
