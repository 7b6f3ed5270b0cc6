#include "transport/http_exchange.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

void sb_http_exchange_unref(struct sb_http_exchange *x)
{
	pthread_mutex_lock(&x->lock);
	bool last = --x->refs == 0;
	pthread_mutex_unlock(&x->lock);
	if (!last)
		return;
	for (struct sb_http_msg *m = x->head, *n; m; m = n) {
		n = m->next;
		sb_http_msg_free(m);
	}
	pthread_cond_destroy(&x->changed);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

void sb_http_msg_free(struct sb_http_msg *m)
{
	if (m) {
		free(m->text);
		free(m);
	}
}

static int x_send(void *ctx, const json_t *msg)
{
	struct sb_http_exchange *x = ctx;
	struct sb_http_msg *m = calloc(1, sizeof *m);
	if (!m || !(m->text = json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(15)))) {
		free(m);
		return -1;
	}
	m->len = strlen(m->text);
	m->response = json_object_get(msg, "id") && !json_object_get(msg, "method");
	m->null_id = m->response && json_is_null(json_object_get(msg, "id"));
	m->error = m->response && json_object_get(msg, "error");
	pthread_mutex_lock(&x->lock);
	if (!m->response && !x->notifications) {
		pthread_mutex_unlock(&x->lock);
		sb_http_msg_free(m);
		return 0; /* no place for it in a JSON answer */
	}
	if (x->closed || x->done || x->queued + m->len > SB_HTTP_EXCHANGE_MAX_QUEUED) {
		pthread_mutex_unlock(&x->lock);
		sb_http_msg_free(m);
		return -1;
	}
	*x->tail = m;
	x->tail = &m->next;
	x->queued += m->len;
	pthread_cond_broadcast(&x->changed);
	pthread_mutex_unlock(&x->lock);
	return 0;
}

static void x_done(void *ctx)
{
	struct sb_http_exchange *x = ctx;
	pthread_mutex_lock(&x->lock);
	x->done = true;
	pthread_cond_broadcast(&x->changed);
	pthread_mutex_unlock(&x->lock);
	sb_http_exchange_unref(x);
}

static void x_rejected(void *ctx, int code)
{
	struct sb_http_exchange *x = ctx;
	pthread_mutex_lock(&x->lock);
	x->rejected = code;
	pthread_mutex_unlock(&x->lock);
}

struct sb_http_exchange *sb_http_exchange_new(struct sb_mcp_client *client, bool notifications)
{
	struct sb_http_exchange *x = calloc(1, sizeof *x);
	if (!x)
		return NULL;
	pthread_mutex_init(&x->lock, NULL);
	sb_cond_init(&x->changed);
	x->tail = &x->head;
	x->refs = 2;
	x->client = client;
	x->notifications = notifications;
	return x;
}

void sb_http_exchange_ref(struct sb_http_exchange *x)
{
	pthread_mutex_lock(&x->lock);
	x->refs++;
	pthread_mutex_unlock(&x->lock);
}

struct sb_mcp_sink sb_http_exchange_sink(struct sb_http_exchange *x)
{
	return (struct sb_mcp_sink){.send = x_send, .done = x_done, .rejected = x_rejected, .ctx = x};
}

struct sb_http_msg *sb_http_exchange_take(struct sb_http_exchange *x)
{
	pthread_mutex_lock(&x->lock);
	struct sb_http_msg *m = x->head;
	if (m) {
		x->head = m->next;
		if (!x->head)
			x->tail = &x->head;
		x->queued -= m->len;
		m->next = NULL;
	}
	pthread_mutex_unlock(&x->lock);
	return m;
}

/* Wait (x->lock held) until what is waited for is there or ms have
 * passed, on the monotonic clock. */
static void wait_for(struct sb_http_exchange *x, bool (*there)(const struct sb_http_exchange *), int ms)
{
	uint64_t end = sb_now_ms() + (uint64_t)(ms > 0 ? ms : 0);
	while (!there(x)) {
		uint64_t now = sb_now_ms();
		if (now >= end || sb_cond_wait_ms(&x->changed, &x->lock, end - now) == ETIMEDOUT)
			break;
	}
}

static bool has_message(const struct sb_http_exchange *x)
{
	return x->head || x->done;
}

static bool is_done(const struct sb_http_exchange *x)
{
	return x->done;
}

bool sb_http_exchange_wait(struct sb_http_exchange *x, int ms)
{
	pthread_mutex_lock(&x->lock);
	wait_for(x, has_message, ms);
	bool ready = x->head || x->done;
	pthread_mutex_unlock(&x->lock);
	return ready;
}

bool sb_http_exchange_wait_done(struct sb_http_exchange *x, int ms)
{
	pthread_mutex_lock(&x->lock);
	wait_for(x, is_done, ms);
	bool done = x->done;
	pthread_mutex_unlock(&x->lock);
	return done;
}

bool sb_http_exchange_done(struct sb_http_exchange *x)
{
	pthread_mutex_lock(&x->lock);
	bool d = x->done;
	pthread_mutex_unlock(&x->lock);
	return d;
}

void sb_http_exchange_close(struct sb_http_exchange *x, const char *reason)
{
	pthread_mutex_lock(&x->lock);
	x->closed = true;
	bool cancel = !x->done;
	pthread_mutex_unlock(&x->lock);
	/* MCP over HTTP: a request's stream closing is its cancellation. */
	if (cancel && x->client)
		sb_mcp_client_cancel_stream(x->client, x, reason);
	sb_http_exchange_unref(x);
}
