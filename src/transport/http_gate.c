#include "transport/http_gate.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/fd.h"

/* What the gate reads ahead (and leaves unread: MSG_PEEK) looking for the
 * end of the headers; libmicrohttpd refuses larger headers (431) itself. */
#define PEEK_MAX (64 * 1024 + 16)
/* New connections taken per round, so that waiting ones are read too. */
#define ACCEPT_BURST 64
/* How often closed connections are summed up in the log. */
#define LOG_EVERY_MS 10000

enum { CUT_SLOW, CUT_FULL, CUT_LIMIT, CUT_KINDS };

struct pend {
	int fd;
	struct sockaddr_storage addr;
	socklen_t len;
	uint64_t since_ms;
	struct pend *prev, *next;
};

struct sb_http_gate {
	struct sb_http_gate_options o;
	int lfd, ep, stop[2];
	unsigned port;
	pthread_t thread;
	bool running;
	struct pend *head, *tail;     /* waiting connections, oldest first */
	unsigned npend;
	struct {
		unsigned long n;      /* since it was last logged */
		uint64_t at;          /* when it was last logged */
	} cuts[CUT_KINDS];
	char peek[PEEK_MAX];
};

static void unlink_pend(struct sb_http_gate *g, struct pend *p)
{
	*(p->prev ? &p->prev->next : &g->head) = p->next;
	*(p->next ? &p->next->prev : &g->tail) = p->prev;
	g->npend--;
}

static void drop(struct sb_http_gate *g, struct pend *p)
{
	unlink_pend(g, p);
	close(p->fd); /* (leaves the epoll set with it) */
	free(p);
}

static void hand_over(struct sb_http_gate *g, struct pend *p)
{
	unlink_pend(g, p);
	epoll_ctl(g->ep, EPOLL_CTL_DEL, p->fd, NULL);
	sb_set_nonblock(p->fd, 0);
	if (!g->o.handoff(g->o.ctx, p->fd, (const struct sockaddr *)&p->addr, p->len)) {
		close(p->fd);
		g->cuts[CUT_LIMIT].n++;
	}
	free(p);
}

/* 1: the header block (or the TLS record) is in; 0: not yet; -1: the
 * client is gone. */
static int ready(struct sb_http_gate *g, const struct pend *p)
{
	ssize_t n = recv(p->fd, g->peek, sizeof g->peek, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0)
		return -1;
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	if ((size_t)n == sizeof g->peek)
		return 1; /* too long to be headers: libmicrohttpd says so (431) */
	const unsigned char *b = (const unsigned char *)g->peek;
	if (g->o.tls) /* a handshake record: 0x16, version, 16-bit length */
		return b[0] != 0x16 || (n >= 5 && (size_t)n >= 5u + ((size_t)b[3] << 8 | b[4]));
	return memmem(b, (size_t)n, "\r\n\r\n", 4) || memmem(b, (size_t)n, "\n\n", 2);
}

static void check(struct sb_http_gate *g, struct pend *p)
{
	int r = ready(g, p);
	if (r > 0)
		hand_over(g, p);
	else if (r < 0)
		drop(g, p);
}

/* Connections the gate closed, by why, summed up in the log: the first of
 * a kind at once, then at most once every LOG_EVERY_MS (an attack would
 * write a line each). */
static void log_cuts(struct sb_http_gate *g, uint64_t now, bool force)
{
	for (int k = 0; k < CUT_KINDS; k++) {
		if (!g->cuts[k].n || (!force && g->cuts[k].at && now - g->cuts[k].at < LOG_EVERY_MS))
			continue;
		char why[160];
		if (k == CUT_SLOW)
			snprintf(why, sizeof why, "closed: they took over %u s to send a request's headers",
				 g->o.header_timeout_s);
		else if (k == CUT_FULL)
			snprintf(why, sizeof why, "closed: more than %u connections were still sending their headers "
				 "(the oldest are closed first)", g->o.max_pending);
		else
			snprintf(why, sizeof why, "refused: the connection limit (--http-max-connections) was reached");
		fprintf(stderr, "sagebox mcp: http: %lu connection(s) %s\n", g->cuts[k].n, why);
		g->cuts[k].n = 0;
		g->cuts[k].at = now;
	}
}

static void accept_some(struct sb_http_gate *g)
{
	for (int i = 0; i < ACCEPT_BURST; i++) {
		struct pend *p = calloc(1, sizeof *p);
		if (!p)
			return;
		p->len = sizeof p->addr;
		p->fd = accept4(g->lfd, (struct sockaddr *)&p->addr, &p->len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (p->fd < 0) {
			int e = errno;
			free(p);
			if ((e == EMFILE || e == ENFILE) && g->head) {
				drop(g, g->head); /* out of descriptors: the oldest waiter makes room */
				g->cuts[CUT_FULL].n++;
				continue;
			}
			if (e == EMFILE || e == ENFILE)
				poll(NULL, 0, 100); /* nothing to close: do not spin on the listen socket */
			return;
		}
		p->since_ms = sb_now_ms();
		p->prev = g->tail;
		*(g->tail ? &g->tail->next : &g->head) = p;
		g->tail = p;
		g->npend++;
		if (g->npend > g->o.max_pending) {
			/* The oldest has had the longest to send its headers; a
			 * real client sends them as soon as it connects. */
			drop(g, g->head);
			g->cuts[CUT_FULL].n++;
		}
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = p};
		if (epoll_ctl(g->ep, EPOLL_CTL_ADD, p->fd, &ev) < 0)
			drop(g, p);
		else
			check(g, p); /* its headers may be in already */
	}
}

static void *gate_main(void *arg)
{
	struct sb_http_gate *g = arg;
	struct epoll_event evs[64];
	for (;;) {
		int n = epoll_wait(g->ep, evs, 64, 250);
		bool listen_ready = false;
		for (int i = 0; i < n; i++) {
			void *ptr = evs[i].data.ptr;
			if (ptr == &g->stop[0])
				return NULL;
			if (ptr == &g->lfd)
				listen_ready = true;
			else
				check(g, ptr);
		}
		if (listen_ready) /* after the waiting ones: they were first */
			accept_some(g);
		uint64_t now = sb_now_ms();
		while (g->head && now - g->head->since_ms >= (uint64_t)g->o.header_timeout_s * 1000) {
			drop(g, g->head);
			g->cuts[CUT_SLOW].n++;
		}
		log_cuts(g, now, false);
	}
}

static int listen_on(struct sb_http_gate *g, struct sb_error *err)
{
	const struct sockaddr *a = g->o.addr;
	g->lfd = socket(a->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (g->lfd < 0)
		return sb_fail_errno(err, "socket");
	int on = 1;
	setsockopt(g->lfd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
	if (a->sa_family == AF_INET6)
		setsockopt(g->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if (bind(g->lfd, a, g->o.addr_len) < 0 || listen(g->lfd, SOMAXCONN) < 0 ||
	    getsockname(g->lfd, (struct sockaddr *)&ss, &len) < 0)
		return sb_fail_errno(err, "bind");
	g->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						 : ((struct sockaddr_in *)&ss)->sin_port);
	return 0;
}

struct sb_http_gate *sb_http_gate_start(const struct sb_http_gate_options *o, struct sb_error *err)
{
	struct sb_http_gate *g = calloc(1, sizeof *g);
	if (!g)
		return sb_fail(err, "out of memory"), NULL;
	g->o = *o;
	g->lfd = g->ep = g->stop[0] = g->stop[1] = -1;
	int rc = listen_on(g, err);
	if (!rc && ((g->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 || sb_pipe(g->stop) < 0))
		rc = sb_fail_errno(err, "epoll");
	struct epoll_event el = {.events = EPOLLIN, .data.ptr = &g->lfd};
	struct epoll_event es = {.events = EPOLLIN, .data.ptr = &g->stop[0]};
	if (!rc && (epoll_ctl(g->ep, EPOLL_CTL_ADD, g->lfd, &el) < 0 || epoll_ctl(g->ep, EPOLL_CTL_ADD, g->stop[0], &es) < 0))
		rc = sb_fail_errno(err, "epoll_ctl");
	if (!rc && pthread_create(&g->thread, NULL, gate_main, g) != 0)
		rc = sb_fail(err, "cannot start a thread");
	g->running = !rc;
	if (rc) {
		sb_http_gate_stop(g);
		return NULL;
	}
	return g;
}

unsigned sb_http_gate_port(const struct sb_http_gate *g)
{
	return g->port;
}

void sb_http_gate_stop(struct sb_http_gate *g)
{
	if (!g)
		return;
	if (g->running) {
		char b = 's';
		(void)SB_RETRY_EINTR(write(g->stop[1], &b, 1));
		pthread_join(g->thread, NULL);
	}
	log_cuts(g, sb_now_ms(), true);
	while (g->head)
		drop(g, g->head);
	sb_close(&g->lfd);
	sb_close(&g->ep);
	sb_close(&g->stop[0]);
	sb_close(&g->stop[1]);
	free(g);
}
