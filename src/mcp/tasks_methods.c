/* The task methods (tasks/get, tasks/result, tasks/list, tasks/cancel,
 * tasks/update), and what a cancelled request, a closed stream or a gone
 * client does to tasks and their waiters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/jsonrpc.h"
#include "mcp/tasks.h"
#include "mcp/tasks_reg.h"
#include "util/jsontext.h"

/* ---- the methods */

/* The task named by params.taskId, under the lock; NULL with r failed. */
static struct task *lookup_locked(struct sb_tasks *t, const struct sb_mcp_request *q, struct sb_task_reply *r)
{
	const json_t *idv = json_object_get(q->params, "taskId");
	const char *id = json_string_value(idv);
	if (!id || sb_json_has_nul(idv)) {
		tk_failf(r, SB_RPC_INVALID_PARAMS, "Invalid params: %s needs \"taskId\" (a string without NUL)", q->method);
		return NULL;
	}
	struct task *k = tk_find_locked(t, q->client->owner, id);
	if (!k)
		tk_failf(r, SB_RPC_INVALID_PARAMS, "Failed to retrieve task: Task not found (no task of yours has the id "
						"'%.80s'; tasks do not survive a restart of sagebox)", id);
	else if (k->expired)
		tk_failf(r, SB_RPC_INVALID_PARAMS, "Failed to retrieve task: Task has expired (its TTL of %llu ms "
						"ended; its result was freed)", (unsigned long long)k->ttl_ms);
	return k && !k->expired ? k : NULL;
}

/* 2026-07-28: a task method without the extension is -32021. */
static bool ext_missing(const struct sb_mcp_request *q, struct sb_task_reply *r)
{
	if (!q->modern || sb_tasks_ext(q))
		return false;
	tk_failf(r, SB_RPC_MISSING_CLIENT_CAPABILITY, "Missing required client capability: %s needs the extension %s "
						   "in the request's clientCapabilities", q->method, SB_TASKS_EXTENSION);
	r->data = json_pack("{s:{s:{s:{}}}}", "requiredCapabilities", "extensions", SB_TASKS_EXTENSION);
	return true;
}

void sb_tasks_get(struct sb_tasks *t, const struct sb_mcp_request *q, struct sb_task_reply *r)
{
	if (ext_missing(q, r))
		return;
	pthread_mutex_lock(&t->lock);
	struct task *k = lookup_locked(t, q, r);
	if (k)
		r->result = tk_task_json(k, q->modern, true);
	pthread_mutex_unlock(&t->lock);
}

void sb_tasks_update(struct sb_tasks *t, const struct sb_mcp_request *q, struct sb_task_reply *r)
{
	if (ext_missing(q, r))
		return;
	pthread_mutex_lock(&t->lock);
	/* A job never asks for input: every inputResponse is for a key never issued, so it is ignored. */
	if (lookup_locked(t, q, r))
		r->result = json_object();
	pthread_mutex_unlock(&t->lock);
}

void sb_tasks_result(struct sb_tasks *t, const struct sb_mcp_request *q, struct sb_task_reply *r)
{
	pthread_mutex_lock(&t->lock);
	struct task *k = lookup_locked(t, q, r);
	if (k && (k->ended || k->state != T_WORKING)) {
		r->result = tk_final_result(k);
	} else if (k) {
		struct waiter *w = calloc(1, sizeof *w);
		if (w && (w->id = json_deep_copy(q->id))) {
			w->client = q->client;
			w->scope = q->id_scope;
			w->reply = q->reply;
			w->next = k->waiters;
			k->waiters = w;
			r->deferred = true;
		} else {
			free(w);
			tk_failf(r, SB_RPC_INTERNAL_ERROR, "Internal error: out of memory");
		}
	}
	pthread_mutex_unlock(&t->lock);
}

void sb_tasks_list(struct sb_tasks *t, const struct sb_mcp_request *q, struct sb_task_reply *r)
{
	const json_t *cursor = json_object_get(q->params, "cursor");
	if (cursor && !json_is_null(cursor)) {
		tk_failf(r, SB_RPC_INVALID_PARAMS, "Invalid params: unknown cursor (the task list has one page)");
		return;
	}
	json_t *list = json_array();
	pthread_mutex_lock(&t->lock);
	for (struct task *k = t->list; k; k = k->next)
		if (!k->expired && !strcmp(k->owner, q->client->owner))
			json_array_append_new(list, tk_task_json(k, false, false));
	pthread_mutex_unlock(&t->lock);
	r->result = json_pack("{s:o}", "tasks", list);
}

/* Under the lock: mark it cancelled and stop its job; NULL or why not. */
static const char *cancel_locked(struct sb_tasks *t, struct task *k, const char *why)
{
	if (k->state != T_WORKING)
		return tk_state_names[k->state];
	tk_set_state_locked(k, T_CANCELLED, "%s", why);
	struct sb_error err = {0};
	struct sb_sessions *ss = tk_sessions(t);
	if (ss)
		sb_job_cancel(ss, k->owner, k->id, &err);
	pthread_cond_broadcast(&t->wake);
	return NULL;
}

void sb_tasks_cancel(struct sb_tasks *t, const struct sb_mcp_request *q, struct sb_task_reply *r)
{
	if (ext_missing(q, r))
		return;
	struct outmsg *box = NULL;
	pthread_mutex_lock(&t->lock);
	struct task *k = lookup_locked(t, q, r);
	const char *was = k ? cancel_locked(t, k, "cancelled by tasks/cancel; its job's processes were killed")
			    : NULL;
	if (k && q->modern) {
		r->result = json_object(); /* an acknowledgement, also for a task that had ended */
	} else if (k && was) {
		tk_failf(r, SB_RPC_INVALID_PARAMS, "Invalid params: the task is already %s; a task in a terminal status "
						"cannot be cancelled", was);
	} else if (k) {
		r->result = tk_task_json(k, false, false);
		tk_answer_waiters_locked(k, &box);
	}
	tk_flush_locked(t, box);
	pthread_mutex_unlock(&t->lock);
}

/* Under the lock: drop the waiters of client c (and with id, only the one
 * with that unscoped id), or those on the stream reply_ctx: a cancelled
 * request gets no response, only its done. Returns how many. */
static unsigned drop_waiters_locked(struct sb_tasks *t, const struct sb_mcp_client *c, const json_t *id,
				    const void *reply_ctx, struct outmsg **box)
{
	unsigned n = 0;
	for (struct task *k = t->list; k; k = k->next)
		for (struct waiter **pp = &k->waiters; *pp;) {
			struct waiter *w = *pp;
			bool match = c ? w->client == c && (!id || (!w->scope && json_equal(w->id, (json_t *)id)))
				       : w->reply.ctx == reply_ctx;
			if (match) {
				*pp = w->next;
				tk_queue(box, &w->reply, NULL, true);
				json_decref(w->id);
				free(w);
				n++;
			} else {
				pp = &w->next;
			}
		}
	return n;
}

bool sb_tasks_cancel_request(struct sb_tasks *t, struct sb_mcp_client *c, const json_t *id)
{
	bool found = false;
	struct outmsg *box = NULL;
	pthread_mutex_lock(&t->lock);
	for (struct task *k = t->list; k; k = k->next)
		if (k->client == c && !k->req_scoped && k->req_id && json_equal(k->req_id, (json_t *)id) &&
		    !k->expired && !cancel_locked(t, k, "cancelled by notifications/cancelled of the request that "
							 "created it; its job's processes were killed")) {
			found = true;
			tk_answer_waiters_locked(k, &box);
		}
	found |= drop_waiters_locked(t, c, id, NULL, &box) > 0;
	tk_flush_locked(t, box);
	pthread_mutex_unlock(&t->lock);
	return found;
}

void sb_tasks_cancel_stream(struct sb_tasks *t, const void *reply_ctx)
{
	struct outmsg *box = NULL;
	pthread_mutex_lock(&t->lock);
	drop_waiters_locked(t, NULL, NULL, reply_ctx, &box);
	tk_flush_locked(t, box);
	pthread_mutex_unlock(&t->lock);
}

void sb_tasks_client_gone(struct sb_tasks *t, struct sb_mcp_client *c)
{
	struct outmsg *box = NULL;
	pthread_mutex_lock(&t->lock);
	for (struct task *k = t->list; k; k = k->next)
		if (k->client == c)
			k->client = NULL;
	drop_waiters_locked(t, c, NULL, NULL, &box);
	tk_flush_locked(t, box);
	while (t->sending)
		pthread_cond_wait(&t->sent, &t->lock);
	pthread_mutex_unlock(&t->lock);
}

