#include "mcp/tasks.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp/jsonrpc.h"
#include "mcp/revision.h"
#include "mcp/tasks_reg.h"
#include "mcp/tasks_view.h"
#include "mcp/toolview.h"
#include "util/clock.h"

/* How often the registry looks at its tasks' jobs while any runs. */
#define WATCH_MS 250
/* An expired task is remembered (to say so) this long after its TTL. */
#define TOMBSTONE_MS (60u * 60 * 1000)

const char *const tk_state_names[] = {"working", "completed", "failed", "cancelled"};

/* Wall-clock ms since the epoch: only for the timestamps a task reports
 * (createdAt, lastUpdatedAt); its TTL runs on the monotonic clock. */
uint64_t tk_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

bool sb_tasks_ext(const struct sb_mcp_request *q)
{
	const json_t *ext = json_object_get(json_object_get(q->capabilities, "extensions"), SB_TASKS_EXTENSION);
	return q->modern && json_is_object(ext);
}

void tk_failf(struct sb_task_reply *r, int code, const char *fmt, ...)
{
	va_list ap;
	r->code = code;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
}

/* ---- the registry (all under t->lock) */

struct task *tk_find_locked(struct sb_tasks *t, const char *owner, const char *id)
{
	for (struct task *k = t->list; k && id; k = k->next)
		if (!strcmp(k->id, id) && !strcmp(k->owner, owner))
			return k;
	return NULL;
}

static const char *status_of(const struct task *k, bool modern)
{
	/* 2026: "failed" is for JSON-RPC errors only; a tool error completes. */
	if (modern && k->state == T_FAILED && k->tool_error)
		return "completed";
	return tk_state_names[k->state];
}

json_t *tk_task_json(const struct task *k, bool modern, bool detailed)
{
	json_t *error = NULL;
	if (modern && k->state == T_FAILED && !k->tool_error)
		error = json_pack("{s:i, s:s}", "code", SB_RPC_INTERNAL_ERROR, "message", k->message);
	struct sb_task_facts f = {.id = k->id, .status = status_of(k, modern), .message = k->message,
				  .created_ms = k->created_ms, .updated_ms = k->updated_ms, .ttl_ms = k->ttl_ms,
				  .result = k->result, .error = error};
	json_t *o = sb_task_json(&f, modern, detailed);
	json_decref(error);
	return o;
}

void tk_queue(struct outmsg **box, const struct sb_mcp_sink *sink, json_t *msg, bool done)
{
	struct outmsg *m = calloc(1, sizeof *m);
	if (!m) {
		json_decref(msg);
		if (done)
			sb_mcp_done(sink);
		return;
	}
	m->sink = *sink;
	m->msg = msg;
	m->done = done;
	m->next = *box;
	*box = m;
}

/* Send what was queued, without the lock (a send may block); a client
 * being freed meanwhile waits for it (sb_tasks_client_gone). Called with
 * the lock held, returns with it held. */
void tk_flush_locked(struct sb_tasks *t, struct outmsg *box)
{
	if (!box)
		return;
	t->sending++;
	pthread_mutex_unlock(&t->lock);
	/* Oldest first: the box is a stack. */
	struct outmsg *rev = NULL;
	while (box) {
		struct outmsg *n = box->next;
		box->next = rev;
		rev = box;
		box = n;
	}
	while (rev) {
		struct outmsg *n = rev->next;
		if (rev->msg)
			sb_mcp_send(&rev->sink, rev->msg);
		if (rev->done)
			sb_mcp_done(&rev->sink);
		free(rev);
		rev = n;
	}
	pthread_mutex_lock(&t->lock);
	if (--t->sending == 0)
		pthread_cond_broadcast(&t->sent);
}

/* The answer of tasks/result for an ended task: the CallToolResult with
 * the related-task _meta. */
json_t *tk_final_result(const struct task *k)
{
	json_t *res = k->result ? json_deep_copy(k->result) : NULL;
	if (!res) {
		struct sb_tool_result r = {.is_error = true};
		sb_tool_result_text(&r, k->message[0] ? k->message : "The task ended without a result.");
		res = sb_mcp_call_result(&r, NULL);
	}
	json_t *meta = json_object_get(res, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(res, "_meta", meta);
	}
	json_object_set_new(meta, SB_TASKS_RELATED_META, json_pack("{s:s}", "taskId", k->id));
	return res;
}

void tk_answer_waiters_locked(struct task *k, struct outmsg **box)
{
	while (k->waiters) {
		struct waiter *w = k->waiters;
		k->waiters = w->next;
		json_t *msg = k->expired ? sb_rpc_error(w->id, SB_RPC_INVALID_PARAMS,
							"Failed to retrieve task: Task has expired (its TTL ended "
							"while the result was awaited)", NULL)
					 : sb_rpc_result(w->id, tk_final_result(k));
		tk_queue(box, &w->reply, msg, true);
		json_decref(w->id);
		free(w);
	}
}

/* 2025-11-25: notifications/tasks/status to the client that created it,
 * once its session is open. */
static void notify_locked(struct task *k, struct outmsg **box)
{
	struct sb_mcp_client *c = k->client;
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	bool open = c->answered;
	pthread_mutex_unlock(&c->lock);
	if (open)
		tk_queue(box, &c->notify, sb_rpc_notification("notifications/tasks/status", tk_task_json(k, false, false)),
		      false);
}

void tk_set_state_locked(struct task *k, enum tstate st, const char *fmt, ...)
{
	va_list ap;
	k->state = st;
	k->updated_ms = tk_wall_ms();
	va_start(ap, fmt);
	vsnprintf(k->message, sizeof k->message, fmt, ap);
	va_end(ap);
}

struct sb_sessions *tk_sessions(struct sb_tasks *t)
{
	struct sb_error err = {0};
	return t->tools->runner ? sb_runner_sessions(t->tools->runner, &err) : NULL;
}

/* Look at a working task's job; when it has ended, keep its result. */
static void watch_locked(struct sb_tasks *t, struct sb_sessions *ss, struct task *k, struct outmsg **box)
{
	struct sb_error err = {0};
	json_t *st = ss ? sb_job_status(ss, k->owner, k->id, &err) : NULL;
	const char *state = json_string_value(json_object_get(st, "state"));
	if (state && (!strcmp(state, "queued") || !strcmp(state, "running"))) {
		json_decref(st);
		return;
	}
	k->ended = true;
	bool was_cancelled = k->state == T_CANCELLED;
	if (!st) {
		/* (A job is kept an hour after it ends, so this is a restart of the runner's state.) */
		if (!was_cancelled)
			tk_set_state_locked(k, T_FAILED, "its background job is gone: %s", err.msg);
	} else {
		size_t cut = t->tools->cfg->limits.output_bytes;
		json_t *out = sb_job_output(ss, k->owner, k->id, 0, cut, &err);
		k->result = sb_task_job_result(st, out, cut);
		json_decref(out);
		k->tool_error = strcmp(state, "done") != 0;
		const char *why = json_string_value(json_object_get(st, "error"));
		if (was_cancelled)
			k->updated_ms = tk_wall_ms(); /* it stays cancelled (the spec's rule) */
		else if (!strcmp(state, "cancelled"))
			tk_set_state_locked(k, T_CANCELLED, "its background job was cancelled%s%s", why ? ": " : "",
					 why ? why : "");
		else if (!strcmp(state, "done"))
			tk_set_state_locked(k, T_COMPLETED, "done after %.1f s",
					 (double)json_integer_value(json_object_get(st, "runtime_ms")) / 1000);
		else
			tk_set_state_locked(k, T_FAILED, "%s%s%s", state, why ? ": " : "", why ? why : "");
	}
	json_decref(st);
	if (!was_cancelled)
		notify_locked(k, box);
	tk_answer_waiters_locked(k, box);
}

static void task_free(struct task *k)
{
	json_decref(k->result);
	json_decref(k->req_id);
	free(k);
}

static void earliest(uint64_t *at, uint64_t when)
{
	if (!*at || when < *at)
		*at = when;
}

/* One round: watch the running, expire the old, forget tombstones.
 * Returns when the next round is due (monotonic ms), or 0: no task. */
static uint64_t round_locked(struct sb_tasks *t, struct outmsg **box)
{
	struct sb_sessions *ss = NULL;
	uint64_t next = 0;
	uint64_t now = sb_now_ms();
	for (struct task **pp = &t->list; *pp;) {
		struct task *k = *pp;
		if (!k->ended && !k->expired) {
			if (!ss)
				ss = tk_sessions(t);
			watch_locked(t, ss, k, box);
		}
		if (!k->expired && now >= k->born_ms + k->ttl_ms) {
			/* Its TTL ended: its job is stopped and its result freed. */
			struct sb_error err = {0};
			if (!k->ended && (ss || (ss = tk_sessions(t))))
				sb_job_cancel(ss, k->owner, k->id, &err);
			k->expired = true;
			json_decref(k->result);
			k->result = NULL;
			tk_answer_waiters_locked(k, box);
			sb_mcp_log_req(NULL, -1, SB_LOG_INFO, "task %s expired after its TTL of %llu ms%s", k->id,
				       (unsigned long long)k->ttl_ms, k->ended ? "" : "; its job was cancelled");
		}
		if (k->expired && now >= k->born_ms + k->ttl_ms + TOMBSTONE_MS) {
			*pp = k->next;
			task_free(k);
			continue;
		}
		if (!k->expired)
			earliest(&next, k->ended ? k->born_ms + k->ttl_ms : now + WATCH_MS);
		else
			earliest(&next, k->born_ms + k->ttl_ms + TOMBSTONE_MS);
		pp = &k->next;
	}
	return next;
}

static void *watcher(void *arg)
{
	struct sb_tasks *t = arg;
	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		struct outmsg *box = NULL;
		uint64_t next = round_locked(t, &box);
		tk_flush_locked(t, box);
		if (t->stop)
			break;
		if (next) {
			uint64_t now = sb_now_ms();
			if (next > now)
				sb_cond_wait_ms(&t->wake, &t->lock, next - now);
		} else {
			pthread_cond_wait(&t->wake, &t->lock);
		}
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

void tk_add_locked(struct sb_tasks *t, struct task *k)
{
	k->next = t->list;
	t->list = k;
	if (!t->started && pthread_create(&t->thread, NULL, watcher, t) == 0)
		t->started = true;
	pthread_cond_broadcast(&t->wake);
}

struct sb_tasks *sb_tasks_new(const struct sb_tool_server *tools, struct sb_audit *audit)
{
	struct sb_tasks *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->tools = tools;
	t->audit = audit;
	pthread_mutex_init(&t->lock, NULL);
	sb_cond_init(&t->wake);
	pthread_cond_init(&t->sent, NULL);
	return t;
}

void sb_tasks_free(struct sb_tasks *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_broadcast(&t->wake);
	bool started = t->started;
	pthread_mutex_unlock(&t->lock);
	if (started)
		pthread_join(t->thread, NULL);
	while (t->list) {
		struct task *k = t->list;
		t->list = k->next;
		for (struct waiter *w = k->waiters, *n; w; w = n) {
			n = w->next;
			sb_mcp_done(&w->reply);
			json_decref(w->id);
			free(w);
		}
		task_free(k);
	}
	pthread_cond_destroy(&t->sent);
	pthread_cond_destroy(&t->wake);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

