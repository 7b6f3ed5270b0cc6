#include "mcp/calls.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp/jsonrpc.h"
#include "mcp/revision.h"
#include "mcp/server.h"
#include "mcp/stateless.h"
#include "mcp/toolview.h"
#include "metrics/metrics.h"
#include "util/clock.h"
#include "util/fd.h"
#include "util/utf8.h"

struct call {
	struct sb_calls *owner;
	json_t *id, *args, *token;
	const struct sb_tool *tool;
	const char *revision;       /* the request's */
	struct sb_mcp_sink reply;   /* the request's */
	bool modern;                /* 2026-07-28 era */
	bool stream_logs;           /* logs go to reply (modern, or asked by the transport) */
	int log_level;              /* modern: the request's _meta logLevel, or -1 */
	const void *scope;          /* non-NULL: the id is scoped to this reply stream */
	char info[160];             /* modern: the request's clientInfo */
	int cancel[2];              /* [0] is the runner's cancel_fd; a byte on [1] cancels */
	atomic_bool cancelled;      /* set under owner->lock */
	bool responded;             /* under owner->lock: the response is (being) sent */
	bool slot_held;             /* holds one of the server's job slots */
	double last_progress;
	pthread_t thread;
	struct call *next;
};

struct sb_calls {
	struct sb_mcp_client *client;
	pthread_mutex_t lock;
	pthread_cond_t idle;        /* in_flight reached 0 */
	struct call *live;          /* queued or running */
	struct call *dead;          /* finished, thread to be joined */
	unsigned in_flight;
	bool closing;
};

struct sb_calls *sb_calls_new(struct sb_mcp_client *client)
{
	struct sb_calls *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->client = client;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->idle, NULL);
	return c;
}

static void call_free(struct call *k)
{
	json_decref(k->id);
	json_decref(k->args);
	json_decref(k->token);
	sb_close(&k->cancel[0]);
	sb_close(&k->cancel[1]);
	free(k);
}

void sb_calls_free(struct sb_calls *c)
{
	if (!c)
		return;
	sb_calls_shutdown(c);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->idle);
	free(c);
}

/* Under lock. */
static void cancel_locked(struct sb_calls *c, struct call *k)
{
	if (atomic_load(&k->cancelled) || k->responded)
		return;
	atomic_store(&k->cancelled, true);
	char b = 'c';
	(void)SB_RETRY_EINTR(write(k->cancel[1], &b, 1));
	/* A call still waiting for a job slot stops waiting. */
	sb_mcp_slot_wake(c->client->srv);
}

/* "12.0 s elapsed; 3.2 KiB on stdout, 0 B on stderr; last line: ..." */
static void progress_message(const struct sb_progress *p, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%.1f s elapsed; %llu bytes on stdout, %llu on stderr so far",
			 (double)p->elapsed_ms / 1000.0, (unsigned long long)p->stdout_bytes,
			 (unsigned long long)p->stderr_bytes);
	if (n < 0 || (size_t)n >= size || !p->stdout_tail || !p->stdout_tail_len)
		return;
	const char *t = p->stdout_tail;
	size_t len = p->stdout_tail_len;
	while (len > 0 && (t[len - 1] == '\n' || t[len - 1] == '\r'))
		len--;
	const char *nl = memrchr(t, '\n', len);
	const char *line = nl ? nl + 1 : t;
	size_t ll = (size_t)(t + len - line);
	ll = sb_utf8_prefix(line, ll, 160);
	if (ll && memchr(line, '\0', ll) == NULL)
		snprintf(buf + n, size - (size_t)n, "; last line: %.*s", (int)ll, line);
}

/* Progress goes to the call's own reply sink (over HTTP: its stream). */
static void on_progress(void *ctx, const struct sb_progress *p)
{
	struct call *k = ctx;
	struct sb_calls *c = k->owner;
	pthread_mutex_lock(&c->lock);
	bool stop = atomic_load(&k->cancelled) || k->responded;
	pthread_mutex_unlock(&c->lock);
	if (stop || !k->token)
		return;
	/* MCP: progress must increase with every notification. */
	double t = (double)p->elapsed_ms / 1000.0;
	if (t <= k->last_progress)
		t = k->last_progress + 0.001;
	k->last_progress = t;
	json_t *params = json_pack("{s:O, s:f}", "progressToken", k->token, "progress", t);
	if (sb_rev_has(k->revision, SB_REV_PROGRESS_MESSAGE)) {
		char msg[512];
		progress_message(p, msg, sizeof msg);
		json_t *m = json_string(msg);
		if (m)
			json_object_set_new(params, "message", m);
	}
	sb_mcp_send(&k->reply, sb_rpc_notification("notifications/progress", params));
}

/* Log about a call: a modern request's log goes to its own stream, and
 * only if it asked; a legacy one's to its client. */
#define call_log(k, ...) sb_mcp_log_routed((k)->owner->client, (k)->stream_logs, &(k)->reply, (k)->log_level, __VA_ARGS__)

/* The audit record's part that the server knows before the handler runs. */
static void audit_head(const struct call *k, struct sb_audit_record *rec)
{
	struct sb_mcp_client *cl = k->owner->client;
	rec->client = cl->owner;
	rec->client_info = k->modern ? k->info : cl->info;
	rec->tool = k->tool->name;
	sb_audit_call_id(rec->call);
	rec->code = sb_tool_audited_text(k->tool, k->args, &rec->code_len, &rec->code_owned);
	if (rec->code)
		rec->code_chars = sb_utf8_count(rec->code, rec->code_len);
	/* Handles a call names (checked text: no NUL), so that the log ties
	 * calls to their sessions and jobs. */
	const char *sid = json_string_value(json_object_get(k->args, "session_id"));
	const char *jid = json_string_value(json_object_get(k->args, "job_id"));
	const char *iid = json_string_value(json_object_get(k->args, "interact_id"));
	snprintf(rec->session, sizeof rec->session, "%s", sid ? sid : "");
	snprintf(rec->job, sizeof rec->job, "%s", jid ? jid : "");
	snprintf(rec->interact, sizeof rec->interact, "%s", iid ? iid : "");
}

/* The run hooks' admit: the call's job slot, taken when its session's turn came. */
static bool admit_slot(void *ctx)
{
	struct call *k = ctx;
	k->slot_held = sb_mcp_slot_take(k->owner->client->srv, k->owner->client->owner, &k->cancelled);
	return k->slot_held;
}

void sb_calls_count(const struct sb_tool *t, const char *outcome, const char *backend, uint64_t ms)
{
	sb_metric_add(SB_M_TOOL_CALLS, 1, (const char *[]){t->name, outcome, backend[0] ? backend : "none"});
	sb_metric_observe(SB_M_TOOL_CALL_SECONDS, (double)ms / 1000.0, (const char *[]){t->name});
}

static void run_call(struct sb_calls *c, struct call *k)
{
	uint64_t arrived = sb_now_ms();
	struct sb_mcp_client *cl = c->client;
	struct sb_mcp_server *s = cl->srv;
	const struct sb_tool *t = k->tool;
	/* A call to a session takes its slot only once the session's turn is
	 * its own (admit_slot): waiting behind the session's other calls, it
	 * holds none that another client's call could run in. */
	bool in_session = t->needs_slot && json_is_string(json_object_get(k->args, "session_id"));
	if (t->needs_slot && !in_session) {
		if (!sb_mcp_slot_take(s, cl->owner, &k->cancelled)) {
			call_log(k, SB_LOG_INFO, "%s: cancelled before it started", t->name);
			sb_calls_count(t, "cancelled", "", sb_now_ms() - arrived);
			return;
		}
		k->slot_held = true;
	}

	struct sb_audit_record rec = {0};
	audit_head(k, &rec);
	struct sb_tool_ctx ctx = {
		.srv = &s->tools,
		.owner = cl->owner,
		.revision = k->revision,
		.hooks = {.progress = k->token ? on_progress : NULL, .ctx = k, .cancel_fd = k->cancel[0],
			  .admit = in_session ? admit_slot : NULL},
		.audit = &rec,
	};
	struct sb_tool_result res = {0};
	call_log(k, SB_LOG_DEBUG, "%s: started", t->name);
	/* On record before any code runs: a server killed mid-call leaves this line. */
	if (s->audit)
		sb_audit_started(s->audit, &rec);
	uint64_t start = sb_now_ms();
	t->handler(t, k->args, &ctx, &res);
	if (!rec.duration_ms)
		rec.duration_ms = sb_now_ms() - start;
	if (s->audit)
		sb_audit_finished(s->audit, &rec);
	free(rec.code_owned);
	if (k->slot_held)
		sb_mcp_slot_give(s, cl->owner);

	pthread_mutex_lock(&c->lock);
	bool cancelled = res.cancelled || atomic_load(&k->cancelled);
	if (!cancelled)
		k->responded = true;
	pthread_mutex_unlock(&c->lock);
	sb_calls_count(t, cancelled ? "cancelled" : rec.ok ? "ok" : "error", rec.backend, sb_now_ms() - arrived);

	if (cancelled) {
		/* MCP: a cancelled request gets no response (nor any other message). */
		sb_tool_result_free(&res);
		sb_mcp_log_req(&k->reply, -1, SB_LOG_INFO, "%s: cancelled, sandbox killed (%llu ms)", t->name,
			       (unsigned long long)rec.duration_ms);
		return;
	}
	/* Before the response: a modern request's log messages must precede it on its stream. */
	call_log(k, rec.ok ? SB_LOG_INFO : SB_LOG_NOTICE, "%s: %s (%llu ms)", t->name, rec.verdict,
		 (unsigned long long)rec.duration_ms);
	json_t *result = sb_mcp_call_result(&res, k->revision);
	sb_stateless_stamp(result, k->revision);
	sb_mcp_send(&k->reply, sb_rpc_result(k->id, result));
	sb_mcp_done(&k->reply);
	k->reply.done = NULL; /* done once */
}

static void *call_main(void *arg)
{
	struct call *k = arg;
	struct sb_calls *c = k->owner;
	run_call(c, k);
	sb_mcp_done(&k->reply);

	pthread_mutex_lock(&c->lock);
	for (struct call **pp = &c->live; *pp; pp = &(*pp)->next)
		if (*pp == k) {
			*pp = k->next;
			break;
		}
	k->next = c->dead;
	c->dead = k;
	if (--c->in_flight == 0)
		pthread_cond_broadcast(&c->idle);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static struct call *find_locked(struct sb_calls *c, const json_t *id, const void *scope)
{
	for (struct call *k = c->live; k; k = k->next)
		if (k->scope == scope && json_equal(k->id, (json_t *)id))
			return k;
	return NULL;
}

static struct call *find_stream_locked(struct sb_calls *c, const void *reply_ctx)
{
	for (struct call *k = c->live; k; k = k->next)
		if (k->reply.ctx == reply_ctx)
			return k;
	return NULL;
}

enum sb_call_start sb_calls_start(struct sb_calls *c, const struct sb_mcp_request *req, const struct sb_tool *t,
				  const json_t *args, const json_t *progress_token)
{
	enum sb_call_start ret = SB_CALL_FAILED;
	pthread_mutex_lock(&c->lock);
	if (c->closing)
		goto out;
	if (find_locked(c, req->id, req->id_scope)) {
		ret = SB_CALL_DUPLICATE_ID;
		goto out;
	}
	if (c->in_flight >= SB_CALLS_MAX_IN_FLIGHT) {
		ret = SB_CALL_BUSY;
		goto out;
	}
	struct call *k = calloc(1, sizeof *k);
	if (!k)
		goto out;
	k->owner = c;
	k->tool = t;
	k->revision = req->revision;
	k->reply = req->reply;
	k->modern = req->modern;
	k->stream_logs = req->modern || req->stream_logs;
	k->log_level = req->log_level;
	k->scope = req->id_scope;
	snprintf(k->info, sizeof k->info, "%s", req->info ? req->info : "");
	k->id = json_deep_copy(req->id);
	k->args = args ? json_deep_copy(args) : json_object();
	k->token = progress_token ? json_deep_copy(progress_token) : NULL;
	k->cancel[0] = k->cancel[1] = -1;
	if (!k->id || !k->args || pipe2(k->cancel, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    pthread_create(&k->thread, NULL, call_main, k) != 0) {
		call_free(k);
		goto out;
	}
	k->next = c->live;
	c->live = k;
	c->in_flight++;
	ret = SB_CALL_STARTED;
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

static void cancel_found(struct sb_calls *c, struct call *k, const char *reason)
{
	bool found = false;
	const char *tool = NULL;
	if (k) {
		found = !atomic_load(&k->cancelled) && !k->responded;
		tool = k->tool->name;
		cancel_locked(c, k);
	}
	pthread_mutex_unlock(&c->lock);
	/* stderr only: a cancelled request gets no further message. */
	if (found)
		sb_mcp_log_req(NULL, -1, SB_LOG_INFO, "%s: cancellation requested%s%s", tool, reason ? ": " : "",
			       reason ? reason : "");
	else
		sb_mcp_log_req(NULL, -1, SB_LOG_DEBUG, "cancellation of a request that is not in flight: ignored");
}

void sb_calls_cancel(struct sb_calls *c, const json_t *id, const char *reason)
{
	pthread_mutex_lock(&c->lock);
	cancel_found(c, find_locked(c, id, NULL), reason); /* unlocks */
}

void sb_calls_cancel_stream(struct sb_calls *c, const void *reply_ctx, const char *reason)
{
	pthread_mutex_lock(&c->lock);
	cancel_found(c, find_stream_locked(c, reply_ctx), reason); /* unlocks */
}

void sb_calls_cancel_all(struct sb_calls *c, const char *reason)
{
	pthread_mutex_lock(&c->lock);
	unsigned n = 0;
	for (struct call *k = c->live; k; k = k->next, n++)
		cancel_locked(c, k);
	pthread_mutex_unlock(&c->lock);
	if (n)
		sb_mcp_log_req(NULL, -1, SB_LOG_INFO, "%u call(s) cancelled: %s", n, reason);
}

void sb_calls_reap(struct sb_calls *c)
{
	pthread_mutex_lock(&c->lock);
	struct call *dead = c->dead;
	c->dead = NULL;
	pthread_mutex_unlock(&c->lock);
	while (dead) {
		struct call *next = dead->next;
		pthread_join(dead->thread, NULL);
		call_free(dead);
		dead = next;
	}
}

void sb_calls_shutdown(struct sb_calls *c)
{
	pthread_mutex_lock(&c->lock);
	c->closing = true;
	for (struct call *k = c->live; k; k = k->next)
		cancel_locked(c, k);
	while (c->in_flight > 0)
		pthread_cond_wait(&c->idle, &c->lock);
	pthread_mutex_unlock(&c->lock);
	sb_calls_reap(c);
}
