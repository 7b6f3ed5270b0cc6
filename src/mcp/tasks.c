#include "mcp/tasks.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp/jsonrpc.h"
#include "mcp/revision.h"
#include "mcp/server.h"
#include "mcp/tasks_view.h"
#include "mcp/toolview.h"
#include "runner/sessions.h"
#include "tools/sessions.h"
#include "util/clock.h"
#include "util/jsontext.h"
#include "util/utf8.h"

/* How often the registry looks at its tasks' jobs while any runs. */
#define WATCH_MS 250
/* The shortest TTL granted, whatever a client asks. */
#define MIN_TTL_MS 1000
/* An expired task is remembered (to say so) this long after its TTL. */
#define TOMBSTONE_MS (60u * 60 * 1000)

enum tstate { T_WORKING, T_COMPLETED, T_FAILED, T_CANCELLED };
static const char *const legacy_names[] = {"working", "completed", "failed", "cancelled"};

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
	struct sb_mcp_server *srv;
	pthread_mutex_t lock;
	pthread_cond_t wake;               /* a task was created, or stop (monotonic: sb_cond_init) */
	pthread_cond_t sent;               /* sending went down */
	struct task *list;
	unsigned sending;                  /* flushes in progress (client_gone waits for 0) */
	bool stop, started;
	pthread_t thread;
};

/* Wall-clock ms since the epoch: only for the timestamps a task reports
 * (createdAt, lastUpdatedAt); its TTL runs on the monotonic clock. */
static uint64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

bool sb_tasks_core(const char *revision)
{
	return sb_rev_has(revision, SB_REV_TASKS) && !sb_rev_has(revision, SB_REV_STATELESS);
}

bool sb_tasks_ext(const struct sb_mcp_request *q)
{
	const json_t *ext = json_object_get(json_object_get(q->capabilities, "extensions"), SB_TASKS_EXTENSION);
	return q->modern && json_is_object(ext);
}

static void failf(struct sb_task_reply *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void failf(struct sb_task_reply *r, int code, const char *fmt, ...)
{
	va_list ap;
	r->code = code;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
}

/* ---- the registry (all under t->lock) */

static struct task *find_locked(struct sb_tasks *t, const char *owner, const char *id)
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
	return legacy_names[k->state];
}

static json_t *task_json(const struct task *k, bool modern, bool detailed)
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

static void queue(struct outmsg **box, const struct sb_mcp_sink *sink, json_t *msg, bool done)
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
static void flush_locked(struct sb_tasks *t, struct outmsg *box)
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
static json_t *final_result(const struct task *k)
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

static void answer_waiters_locked(struct task *k, struct outmsg **box)
{
	while (k->waiters) {
		struct waiter *w = k->waiters;
		k->waiters = w->next;
		json_t *msg = k->expired ? sb_rpc_error(w->id, SB_RPC_INVALID_PARAMS,
							"Failed to retrieve task: Task has expired (its TTL ended "
							"while the result was awaited)", NULL)
					 : sb_rpc_result(w->id, final_result(k));
		queue(box, &w->reply, msg, true);
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
		queue(box, &c->notify, sb_rpc_notification("notifications/tasks/status", task_json(k, false, false)),
		      false);
}

static void set_state_locked(struct task *k, enum tstate st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_state_locked(struct task *k, enum tstate st, const char *fmt, ...)
{
	va_list ap;
	k->state = st;
	k->updated_ms = wall_ms();
	va_start(ap, fmt);
	vsnprintf(k->message, sizeof k->message, fmt, ap);
	va_end(ap);
}

static struct sb_sessions *sessions(struct sb_tasks *t)
{
	struct sb_error err = {0};
	return t->srv->tools.runner ? sb_runner_sessions(t->srv->tools.runner, &err) : NULL;
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
			set_state_locked(k, T_FAILED, "its background job is gone: %s", err.msg);
	} else {
		size_t cut = t->srv->tools.cfg->limits.output_bytes;
		json_t *out = sb_job_output(ss, k->owner, k->id, 0, cut, &err);
		k->result = sb_task_job_result(st, out, cut);
		json_decref(out);
		k->tool_error = strcmp(state, "done") != 0;
		const char *why = json_string_value(json_object_get(st, "error"));
		if (was_cancelled)
			k->updated_ms = wall_ms(); /* it stays cancelled (the spec's rule) */
		else if (!strcmp(state, "cancelled"))
			set_state_locked(k, T_CANCELLED, "its background job was cancelled%s%s", why ? ": " : "",
					 why ? why : "");
		else if (!strcmp(state, "done"))
			set_state_locked(k, T_COMPLETED, "done after %.1f s",
					 (double)json_integer_value(json_object_get(st, "runtime_ms")) / 1000);
		else
			set_state_locked(k, T_FAILED, "%s%s%s", state, why ? ": " : "", why ? why : "");
	}
	json_decref(st);
	if (!was_cancelled)
		notify_locked(k, box);
	answer_waiters_locked(k, box);
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
				ss = sessions(t);
			watch_locked(t, ss, k, box);
		}
		if (!k->expired && now >= k->born_ms + k->ttl_ms) {
			/* Its TTL ended: its job is stopped and its result freed. */
			struct sb_error err = {0};
			if (!k->ended && (ss || (ss = sessions(t))))
				sb_job_cancel(ss, k->owner, k->id, &err);
			k->expired = true;
			json_decref(k->result);
			k->result = NULL;
			answer_waiters_locked(k, box);
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
		flush_locked(t, box);
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

struct sb_tasks *sb_tasks_new(struct sb_mcp_server *srv)
{
	struct sb_tasks *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->srv = srv;
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
static void audit_start(struct sb_mcp_server *s, const struct sb_mcp_request *q, const struct sb_tool *tool,
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
	if (s->audit)
		sb_audit_started(s->audit, rec);
}

/* Start the job; 0 with its id, or -1 with r->result an error CallToolResult. */
static int start_job(struct sb_tasks *t, const struct sb_mcp_request *q, const struct sb_tool *tool,
		     const json_t *args, char id[SB_SESSION_ID_LEN], unsigned *timeout, struct sb_task_reply *r)
{
	struct sb_mcp_server *s = t->srv;
	const struct sb_config *cfg = s->tools.cfg;
	struct sb_audit_record rec = {0};
	audit_start(s, q, tool, args, &rec);
	struct sb_tool_ctx ctx = {.srv = &s->tools, .owner = q->client->owner, .revision = q->revision,
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
		if (!s->tools.runner || sb_runner_run(s->tools.runner, &job, NULL, &ro)) {
			if (!s->tools.runner || ro.unusable)
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
	if (s->audit)
		sb_audit_finished(s->audit, &rec);
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
			failf(r, SB_RPC_INVALID_PARAMS, "Invalid params: \"task\" must be an object whose \"ttl\", if "
							"given, is a number of milliseconds (0 or more)");
			return;
		}
		if (!tool->task_support) {
			failf(r, SB_RPC_METHOD_NOT_FOUND, "Method not found: the tool %s cannot run as a task (its "
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
		struct sb_sessions *ss = sessions(t);
		if (ss)
			sb_job_cancel(ss, q->client->owner, id, &err);
		failf(r, SB_RPC_INTERNAL_ERROR, "Internal error: out of memory");
		return;
	}
	snprintf(k->id, sizeof k->id, "%s", id);
	snprintf(k->owner, sizeof k->owner, "%s", q->client->owner);
	k->created_ms = k->updated_ms = wall_ms();
	k->born_ms = sb_now_ms();
	k->ttl_ms = grant_ttl(t->srv->tools.cfg, asked);
	k->state = T_WORKING;
	snprintf(k->message, sizeof k->message, "running as background job %s (at most %u s)", id, timeout);
	if (!modern) {
		k->client = q->client;
		k->req_id = json_deep_copy(q->id);
		k->req_scoped = q->id_scope != NULL;
	}

	pthread_mutex_lock(&t->lock);
	k->next = t->list;
	t->list = k;
	json_t *task = task_json(k, modern, false);
	if (!t->started && pthread_create(&t->thread, NULL, watcher, t) == 0)
		t->started = true;
	pthread_cond_broadcast(&t->wake);
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

/* ---- the methods */

/* The task named by params.taskId, under the lock; NULL with r failed. */
static struct task *lookup_locked(struct sb_tasks *t, const struct sb_mcp_request *q, struct sb_task_reply *r)
{
	const json_t *idv = json_object_get(q->params, "taskId");
	const char *id = json_string_value(idv);
	if (!id || sb_json_has_nul(idv)) {
		failf(r, SB_RPC_INVALID_PARAMS, "Invalid params: %s needs \"taskId\" (a string without NUL)", q->method);
		return NULL;
	}
	struct task *k = find_locked(t, q->client->owner, id);
	if (!k)
		failf(r, SB_RPC_INVALID_PARAMS, "Failed to retrieve task: Task not found (no task of yours has the id "
						"'%.80s'; tasks do not survive a restart of sagebox)", id);
	else if (k->expired)
		failf(r, SB_RPC_INVALID_PARAMS, "Failed to retrieve task: Task has expired (its TTL of %llu ms "
						"ended; its result was freed)", (unsigned long long)k->ttl_ms);
	return k && !k->expired ? k : NULL;
}

/* 2026-07-28: a task method without the extension is -32021. */
static bool ext_missing(const struct sb_mcp_request *q, struct sb_task_reply *r)
{
	if (!q->modern || sb_tasks_ext(q))
		return false;
	failf(r, SB_RPC_MISSING_CLIENT_CAPABILITY, "Missing required client capability: %s needs the extension %s "
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
		r->result = task_json(k, q->modern, true);
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
		r->result = final_result(k);
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
			failf(r, SB_RPC_INTERNAL_ERROR, "Internal error: out of memory");
		}
	}
	pthread_mutex_unlock(&t->lock);
}

void sb_tasks_list(struct sb_tasks *t, const struct sb_mcp_request *q, struct sb_task_reply *r)
{
	const json_t *cursor = json_object_get(q->params, "cursor");
	if (cursor && !json_is_null(cursor)) {
		failf(r, SB_RPC_INVALID_PARAMS, "Invalid params: unknown cursor (the task list has one page)");
		return;
	}
	json_t *list = json_array();
	pthread_mutex_lock(&t->lock);
	for (struct task *k = t->list; k; k = k->next)
		if (!k->expired && !strcmp(k->owner, q->client->owner))
			json_array_append_new(list, task_json(k, false, false));
	pthread_mutex_unlock(&t->lock);
	r->result = json_pack("{s:o}", "tasks", list);
}

/* Under the lock: mark it cancelled and stop its job; NULL or why not. */
static const char *cancel_locked(struct sb_tasks *t, struct task *k, const char *why)
{
	if (k->state != T_WORKING)
		return legacy_names[k->state];
	set_state_locked(k, T_CANCELLED, "%s", why);
	struct sb_error err = {0};
	struct sb_sessions *ss = sessions(t);
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
		failf(r, SB_RPC_INVALID_PARAMS, "Invalid params: the task is already %s; a task in a terminal status "
						"cannot be cancelled", was);
	} else if (k) {
		r->result = task_json(k, false, false);
		answer_waiters_locked(k, &box);
	}
	flush_locked(t, box);
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
				queue(box, &w->reply, NULL, true);
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
			answer_waiters_locked(k, &box);
		}
	found |= drop_waiters_locked(t, c, id, NULL, &box) > 0;
	flush_locked(t, box);
	pthread_mutex_unlock(&t->lock);
	return found;
}

void sb_tasks_cancel_stream(struct sb_tasks *t, const void *reply_ctx)
{
	struct outmsg *box = NULL;
	pthread_mutex_lock(&t->lock);
	drop_waiters_locked(t, NULL, NULL, reply_ctx, &box);
	flush_locked(t, box);
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
	flush_locked(t, box);
	while (t->sending)
		pthread_cond_wait(&t->sent, &t->lock);
	pthread_mutex_unlock(&t->lock);
}
