#include "mcp/calls.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "mcp/toolcall.h"
#include "util/utf8.h"

struct call {
	struct sb_calls *owner;
	json_t *id, *args, *token;
	const struct sb_tool *tool;
	int cancel[2];       /* [0] is the runner's cancel_fd; a byte on [1] cancels */
	bool cancelled;      /* under owner->lock */
	bool responded;      /* under owner->lock: the response is (being) sent */
	double last_progress;
	pthread_t thread;
	struct call *next;
};

struct sb_calls {
	struct sb_mcp *srv;
	pthread_mutex_t lock;
	pthread_cond_t turn;      /* a running slot was freed, or a call was cancelled */
	pthread_cond_t idle;      /* in_flight reached 0 */
	struct call *live;        /* queued or running */
	struct call *dead;        /* finished, thread to be joined */
	unsigned running, max_running, in_flight;
	bool closing;
};

struct sb_calls *sb_calls_new(struct sb_mcp *srv, unsigned max_running)
{
	struct sb_calls *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->srv = srv;
	c->max_running = max_running ? max_running : 1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->turn, NULL);
	pthread_cond_init(&c->idle, NULL);
	return c;
}

static void call_free(struct call *k)
{
	json_decref(k->id);
	json_decref(k->args);
	json_decref(k->token);
	if (k->cancel[0] >= 0)
		close(k->cancel[0]);
	if (k->cancel[1] >= 0)
		close(k->cancel[1]);
	free(k);
}

void sb_calls_free(struct sb_calls *c)
{
	if (!c)
		return;
	sb_calls_shutdown(c);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->turn);
	pthread_cond_destroy(&c->idle);
	free(c);
}

/* Under lock. */
static void cancel_locked(struct sb_calls *c, struct call *k)
{
	if (k->cancelled || k->responded)
		return;
	k->cancelled = true;
	char b = 'c';
	ssize_t w;
	do
		w = write(k->cancel[1], &b, 1);
	while (w < 0 && errno == EINTR);
	pthread_cond_broadcast(&c->turn);
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

static void on_progress(void *ctx, const struct sb_progress *p)
{
	struct call *k = ctx;
	struct sb_calls *c = k->owner;
	pthread_mutex_lock(&c->lock);
	bool stop = k->cancelled || k->responded;
	pthread_mutex_unlock(&c->lock);
	if (stop || !k->token)
		return;
	/* MCP: progress must increase with every notification. */
	double t = (double)p->elapsed_ms / 1000.0;
	if (t <= k->last_progress)
		t = k->last_progress + 0.001;
	k->last_progress = t;
	json_t *params = json_pack("{s:O, s:f}", "progressToken", k->token, "progress", t);
	if (sb_mcp_version_has(sb_mcp_version(c->srv), "2025-03-26")) {
		char msg[512];
		progress_message(p, msg, sizeof msg);
		json_t *m = json_string(msg);
		if (m)
			json_object_set_new(params, "message", m);
	}
	sb_mcp_send(c->srv, sb_rpc_notification("notifications/progress", params));
}

/* Wait for a running slot. Returns false when cancelled first. */
static bool take_turn(struct sb_calls *c, struct call *k)
{
	pthread_mutex_lock(&c->lock);
	while (!k->cancelled && c->running >= c->max_running)
		pthread_cond_wait(&c->turn, &c->lock);
	bool go = !k->cancelled;
	if (go)
		c->running++;
	pthread_mutex_unlock(&c->lock);
	return go;
}

static void run_call(struct sb_calls *c, struct call *k)
{
	struct sb_mcp *s = c->srv;
	/* The status never runs code, so it does not wait behind jobs. */
	bool needs_slot = k->tool->kind != SB_TOOL_STATUS;
	if (needs_slot && !take_turn(c, k)) {
		sb_mcp_log(s, SB_LOG_INFO, "%s: cancelled before it started", k->tool->name);
		return;
	}

	struct sb_run_args ra = {0};
	char msg[512];
	if (sb_tool_check_args(k->tool, k->args, s->cfg, &ra, msg, sizeof msg) < 0)
		ra.code = NULL; /* cannot happen: checked before the call started */
	struct sb_tool_env env = {
		.cfg = s->cfg, .runner = s->runner, .runner_err = &s->runner_err, .version = sb_mcp_version(s)};
	struct sb_run_hooks hooks = {
		.progress = k->token ? on_progress : NULL,
		.ctx = k,
		.progress_interval_ms = 2000,
		.cancel_fd = k->cancel[0],
	};
	struct sb_audit_record rec = {0};
	bool cancelled = false;
	sb_mcp_log(s, SB_LOG_DEBUG, "%s: started", k->tool->name);
	json_t *result = sb_tool_execute(&env, k->tool, &ra, &hooks, &rec, &cancelled);
	if (s->audit)
		sb_audit_write(s->audit, &rec);

	pthread_mutex_lock(&c->lock);
	if (needs_slot) {
		c->running--;
		pthread_cond_broadcast(&c->turn);
	}
	cancelled = cancelled || k->cancelled;
	if (!cancelled)
		k->responded = true;
	pthread_mutex_unlock(&c->lock);

	if (cancelled) {
		/* MCP: a cancelled request gets no response. */
		json_decref(result);
		sb_mcp_log(s, SB_LOG_INFO, "%s: cancelled, sandbox killed (%llu ms)", k->tool->name,
			   (unsigned long long)rec.duration_ms);
		return;
	}
	sb_mcp_send(s, sb_rpc_result(k->id, result));
	sb_mcp_log(s, rec.ok ? SB_LOG_INFO : SB_LOG_NOTICE, "%s: %s (%llu ms)", k->tool->name, rec.verdict,
		   (unsigned long long)rec.duration_ms);
}

static void *call_main(void *arg)
{
	struct call *k = arg;
	struct sb_calls *c = k->owner;
	run_call(c, k);

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

enum sb_call_start sb_calls_start(struct sb_calls *c, const json_t *id, const struct sb_tool *t,
				  const json_t *args, const json_t *progress_token)
{
	enum sb_call_start ret = SB_CALL_FAILED;
	pthread_mutex_lock(&c->lock);
	if (c->closing)
		goto out;
	for (struct call *k = c->live; k; k = k->next)
		if (json_equal(k->id, (json_t *)id)) {
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
	k->id = json_deep_copy(id);
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

void sb_calls_cancel(struct sb_calls *c, const json_t *id, const char *reason)
{
	bool found = false;
	const char *tool = NULL;
	pthread_mutex_lock(&c->lock);
	for (struct call *k = c->live; k; k = k->next)
		if (json_equal(k->id, (json_t *)id)) {
			found = !k->cancelled && !k->responded;
			tool = k->tool->name;
			cancel_locked(c, k);
			break;
		}
	pthread_mutex_unlock(&c->lock);
	if (found)
		sb_mcp_log(c->srv, SB_LOG_INFO, "%s: cancellation requested%s%s", tool, reason ? ": " : "",
			   reason ? reason : "");
	else
		sb_mcp_log(c->srv, SB_LOG_DEBUG, "cancellation of a request that is not in flight: ignored");
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
