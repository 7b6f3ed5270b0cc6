#include "transport/http_reaper.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/fd.h"

/* One open connection. */
struct sb_http_conn {
	int fd;
	bool receiving;               /* waiting for (the rest of) a request */
	bool authed;                  /* a request on it showed a valid token */
	time_t deadline;
	struct sb_http_conn *next;    /* newer first */
};

struct sb_http_reaper {
	unsigned request_timeout_s, header_timeout_s;
	void (*tick)(void *ctx);
	void *ctx;
	pthread_mutex_t lock;         /* conns and every field of theirs */
	struct sb_http_conn *conns;
	pthread_t thread;
	bool running;
	int stop[2];
};

static void *reaper_main(void *arg)
{
	struct sb_http_reaper *r = arg;
	for (;;) {
		struct pollfd p = {.fd = r->stop[0], .events = POLLIN};
		if (SB_RETRY_EINTR(poll(&p, 1, 1000)) > 0)
			return NULL;
		time_t now = time(NULL);
		pthread_mutex_lock(&r->lock);
		for (struct sb_http_conn *k = r->conns; k; k = k->next)
			if (k->receiving && now > k->deadline && k->fd >= 0) {
				/* The connection's thread sees end of input and closes it. */
				shutdown(k->fd, SHUT_RDWR);
				k->receiving = false;
				fprintf(stderr, "sagebox mcp: http: a client took over %u s to send a request%s: "
					"connection closed\n", k->authed ? r->request_timeout_s : r->header_timeout_s,
					k->authed ? "" : "'s headers");
			}
		pthread_mutex_unlock(&r->lock);
		r->tick(r->ctx);
	}
}

struct sb_http_reaper *sb_http_reaper_start(unsigned request_timeout_s, unsigned header_timeout_s,
					    void (*tick)(void *ctx), void *ctx, struct sb_error *err)
{
	struct sb_http_reaper *r = calloc(1, sizeof *r);
	if (!r)
		return sb_fail(err, "out of memory"), NULL;
	r->request_timeout_s = request_timeout_s;
	r->header_timeout_s = header_timeout_s;
	r->tick = tick;
	r->ctx = ctx;
	r->stop[0] = r->stop[1] = -1;
	pthread_mutex_init(&r->lock, NULL);
	int rc = 0;
	if (sb_pipe(r->stop) < 0)
		rc = sb_fail_errno(err, "pipe");
	else if (pthread_create(&r->thread, NULL, reaper_main, r) != 0)
		rc = sb_fail(err, "cannot start a thread");
	else
		r->running = true;
	if (rc < 0) {
		sb_http_reaper_stop(r);
		return NULL;
	}
	return r;
}

void sb_http_reaper_stop(struct sb_http_reaper *r)
{
	if (!r)
		return;
	if (r->running) {
		char b = 's';
		(void)SB_RETRY_EINTR(write(r->stop[1], &b, 1));
		pthread_join(r->thread, NULL);
	}
	sb_close(&r->stop[0]);
	sb_close(&r->stop[1]);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

struct sb_http_conn *sb_http_conn_open(struct sb_http_reaper *r, int fd)
{
	struct sb_http_conn *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	k->fd = fd;
	k->receiving = true;
	k->deadline = time(NULL) + (time_t)r->header_timeout_s;
	pthread_mutex_lock(&r->lock);
	k->next = r->conns;
	r->conns = k;
	unsigned preauth = 0;
	struct sb_http_conn *oldest = NULL;
	for (struct sb_http_conn *o = r->conns; o; o = o->next)
		if (!o->authed && o->fd >= 0) {
			preauth++;
			oldest = o;
		}
	if (preauth > SB_HTTP_PREAUTH_MAX) {
		/* Its thread sees end of input and closes it. */
		shutdown(oldest->fd, SHUT_RDWR);
		oldest->fd = -1;
		oldest->receiving = false;
	}
	pthread_mutex_unlock(&r->lock);
	return k;
}

void sb_http_conn_close(struct sb_http_reaper *r, struct sb_http_conn *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&r->lock);
	for (struct sb_http_conn **pp = &r->conns; *pp; pp = &(*pp)->next)
		if (*pp == k) {
			*pp = k->next;
			break;
		}
	pthread_mutex_unlock(&r->lock);
	free(k);
}

void sb_http_conn_receiving(struct sb_http_reaper *r, struct sb_http_conn *k, bool on)
{
	if (!k)
		return;
	pthread_mutex_lock(&r->lock);
	k->receiving = on;
	k->deadline = time(NULL) + (time_t)r->request_timeout_s;
	pthread_mutex_unlock(&r->lock);
}

void sb_http_conn_authed(struct sb_http_reaper *r, struct sb_http_conn *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&r->lock);
	if (!k->authed) /* its first request: request_timeout_s in all, as any request */
		k->deadline += (time_t)r->request_timeout_s - (time_t)r->header_timeout_s;
	k->authed = true;
	pthread_mutex_unlock(&r->lock);
}
