/* The proxy's loop: listening sockets per sandbox, the control
 * socket, relaying bytes both ways, the caps and the idle sweep. Where a
 * request may go is proxy_decide.c; a connection's answer, audit line
 * and end are proxy_conn.c's. */
#include "net/proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "net/dest.h"
#include "net/request.h"
#include "net/proxy_conn.h"
#include "net/proxy_control.h"
#include "net/proxy_decide.h"
#include "util/clock.h"

/* Seconds on the monotonic clock (idle and head deadlines). */
static time_t now_s(void)
{
	return (time_t)(sb_now_ms() / 1000);
}

/* Move bytes from fd into b; 0 ok, -1 closed or failed (eof set). */
static int fill(int fd, struct pipe_buf *b, bool *eof, uint64_t *count, uint64_t *total)
{
	if (b->off && b->len == 0)
		b->off = 0;
	size_t room = BUF - b->off - b->len;
	if (!room)
		return 0;
	ssize_t r = read(fd, b->data + b->off + b->len, room);
	if (r > 0) {
		b->len += (size_t)r;
		*count += (uint64_t)r;
		*total += (uint64_t)r;
		return 0;
	}
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	*eof = true;
	return r < 0 ? -1 : 0;
}

/* Read the client's bytes and drop them (after its request's message, or
 * after our answer). 0 ok, -1 failed (eof set). */
static int drop_client_bytes(struct conn *c)
{
	static char sink[BUF];
	ssize_t r = read(c->cfd, sink, sizeof sink);
	if (r > 0) {
		c->up += (uint64_t)r;
		c->l->up += (uint64_t)r;
		return 0;
	}
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	c->c_eof = true;
	return r < 0 ? -1 : 0;
}

static int drain(int fd, struct pipe_buf *b)
{
	if (!b->len)
		return 0;
	ssize_t w = send(fd, b->data + b->off, b->len, MSG_NOSIGNAL);
	if (w < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	b->off += (size_t)w;
	b->len -= (size_t)w;
	if (!b->len)
		b->off = 0;
	else if (b->off > BUF / 2) {
		memmove(b->data, b->data + b->off, b->len);
		b->off = 0;
	}
	return 0;
}

static void on_client(struct proxy *px, struct conn *c, uint32_t ev)
{
	c->last = now_s();
	if (c->st == S_HEAD) {
		ssize_t r = read(c->cfd, c->head + c->head_n, sizeof c->head - c->head_n);
		if (r <= 0) {
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				return;
			snprintf(c->connect_err, sizeof c->connect_err, "closed before a complete request head");
			px_conn_close(px, c);
			return;
		}
		c->head_n += (size_t)r;
		c->up += (uint64_t)r;
		c->l->up += (uint64_t)r;
		px_decide(px, c);
		return;
	}
	if ((ev & EPOLLOUT) && drain(c->cfd, &c->u2c)) {
		px_conn_close(px, c);
		return;
	}
	if (!(ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) || !px_client_readable(c))
		return;
	if (c->close_after_flush || (c->framed && c->body.done)) {
		if (drop_client_bytes(c))
			px_conn_close(px, c);
		return;
	}
	size_t before = c->c2u.len;
	if (fill(c->cfd, &c->c2u, &c->c_eof, &c->up, &c->l->up) || (c->framed && px_frame(c, before)))
		px_conn_close(px, c);
}

static void on_upstream(struct proxy *px, struct conn *c, uint32_t ev)
{
	c->last = now_s();
	if (c->st == S_CONNECTING) {
		px_connected(px, c);
		return;
	}
	if ((ev & EPOLLOUT) && drain(c->ufd, &c->c2u)) {
		px_conn_close(px, c);
		return;
	}
	if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->u_eof)
		if (fill(c->ufd, &c->u2c, &c->u_eof, &c->down, &c->l->down) && !c->u2c.len) {
			px_conn_close(px, c);
			return;
		}
}

/* After any event: pass EOFs on, enforce the byte caps, close what is done. */
static void settle(struct proxy *px, struct conn *c)
{
	if (px_pending(c) && px_feed_pending(c)) {
		px_conn_close(px, c); /* part of its request went upstream: no answer of ours can follow */
		return;
	}
	if (c->st != S_RELAY) {
		px_arm(px, c);
		return;
	}
	if (c->l->up > SB_PROXY_BYTES_MAX || c->l->down > SB_PROXY_BYTES_MAX) {
		snprintf(c->connect_err, sizeof c->connect_err, "the sandbox's network byte cap was reached");
		px_conn_close(px, c);
		return;
	}
	if (c->close_after_flush) {
		/* Our answer sent: shut our side and drop what the client still
		 * sends until its EOF. Closed with its bytes unread, the socket
		 * would reset, and the relay inside lose the answer. */
		if (!c->u2c.len && c->c_eof) {
			px_conn_close(px, c);
			return;
		}
		if (!c->u2c.len && !c->lingering) {
			px_audit(px, c); /* now, not at the client's EOF: the answer is out */
			c->audited = true;
			shutdown(c->cfd, SHUT_WR);
			c->lingering = true;
			c->linger_until = now_s() + SB_PROXY_LINGER_S;
		}
		px_arm(px, c);
		return;
	}
	bool sent_all = !c->c2u.len && !px_pending(c);
	if (c->c_eof && sent_all && c->ufd >= 0)
		shutdown(c->ufd, SHUT_WR);
	if (c->u_eof && !c->u2c.len)
		shutdown(c->cfd, SHUT_WR);
	if (c->c_eof && c->u_eof && sent_all && !c->u2c.len) {
		px_conn_close(px, c);
		return;
	}
	px_arm(px, c);
}

static void accept_one(struct proxy *px, struct listener *l)
{
	int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	/* Over the cap a connection is still taken, up to as many again, and
	 * answered 503 once its head has arrived: a reply sent and closed at
	 * once would race the client's own send, which then fails with EPIPE
	 * and never reads the reason. Beyond that it is closed unread. */
	unsigned working = l->conns - l->over;
	struct conn *c = l->conns >= 2 * SB_PROXY_CONNS_MAX ? NULL : calloc(1, sizeof *c);
	if (!c) {
		close(fd);
		char why[160];
		if (l->conns >= 2 * SB_PROXY_CONNS_MAX)
			snprintf(why, sizeof why,
				 "closed unread: too many network connections at once from this sandbox (%u already "
				 "open)",
				 l->conns);
		else
			snprintf(why, sizeof why, "closed unread: the proxy is out of memory");
		px_audit_line(px, l->who, "", 0, false, why, 0, 0);
		return;
	}
	if (working >= SB_PROXY_CONNS_MAX) {
		c->over_cap = true;
		l->over++;
	}
	c->hc = (struct handle){K_CLIENT, c};
	c->hu = (struct handle){K_UPSTREAM, c};
	c->l = l;
	snprintf(c->who, sizeof c->who, "%s", l->who);
	c->cfd = fd;
	c->ufd = -1;
	c->started = c->last = now_s();
	c->next = px->conns;
	px->conns = c;
	l->conns++;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c->hc};
	epoll_ctl(px->ep, EPOLL_CTL_ADD, fd, &ev);
}

static struct listener *listener_add(struct proxy *px, int fd, unsigned id, const char *who)
{
	struct listener *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	l->h = (struct handle){K_LISTENER, l};
	l->fd = fd;
	l->id = id;
	snprintf(l->who, sizeof l->who, "%s", who);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &l->h};
	if (epoll_ctl(px->ep, EPOLL_CTL_ADD, fd, &ev)) {
		free(l);
		return NULL;
	}
	l->next = px->listeners;
	px->listeners = l;
	return l;
}

/* A sandbox's label for the audit changed (a warm worker's next call, a
 * spare session handed to its client): connections made from now on carry
 * the new one. */
static void listener_who(struct proxy *px, unsigned id, const char *who)
{
	for (struct listener *l = px->listeners; l; l = l->next)
		if (l->id == id && !l->gone)
			snprintf(l->who, sizeof l->who, "%s", who);
}

/* A sandbox ended: its socket and every connection from it close now. */
static void listener_del(struct proxy *px, unsigned id)
{
	for (struct listener *l = px->listeners; l; l = l->next) {
		if (l->id != id || l->gone)
			continue;
		l->gone = true;
		epoll_ctl(px->ep, EPOLL_CTL_DEL, l->fd, NULL);
		close(l->fd);
		l->fd = -1;
		unsigned left = l->conns;
		for (struct conn *c = px->conns, *n; c && left; c = n) {
			n = c->next;
			if (c->l == l && c->st != S_RESOLVING) {
				snprintf(c->connect_err, sizeof c->connect_err, "the sandbox ended");
				px_conn_close(px, c); /* may free l with its last connection */
				left--;
			}
		}
		/* conn_close freed l when it was the last; else the lookups left
		 * free it. (Stop at l: freed, it has no next to read.) */
		for (struct listener *k = px->listeners; k; k = k->next)
			if (k == l) {
				if (!l->conns)
					px_listener_free(px, l);
				break;
			}
		return;
	}
}

/* One control message; -1 when the control socket hung up. */
static int on_control(struct proxy *px, int fd)
{
	char msg[SB_PROXY_MSG_MAX + 1];
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {msg, SB_PROXY_MSG_MAX};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return n < 0 && errno == EINTR ? 0 : -1;
	msg[n] = '\0';
	int passed = -1;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&passed, CMSG_DATA(cm), sizeof passed);
	unsigned id;
	int at = 0;
	if (passed >= 0 && sscanf(msg, "add %u %n", &id, &at) == 1 && at > 0) {
		if (!listener_add(px, passed, id, msg + at))
			close(passed);
		return 0;
	}
	if (passed >= 0)
		close(passed);
	if (sscanf(msg, "del %u", &id) == 1)
		listener_del(px, id);
	else if (sscanf(msg, "who %u %n", &id, &at) == 1 && at > 0)
		listener_who(px, id, msg + at);
	return 0;
}

/* The proxy ends (sagebox hung up): every connection still open gets its
 * audit line, a lookup's too. */
static void close_all(struct proxy *px)
{
	for (struct conn *c = px->conns, *n; c; c = n) {
		n = c->next;
		snprintf(c->connect_err, sizeof c->connect_err, "sagebox ended");
		if ((c->st == S_RESOLVING || c->st == S_DONE) && !c->audited)
			px_audit(px, c); /* the lookup thread still holds it */
		else
			px_conn_close(px, c);
	}
}

static void sweep(struct proxy *px)
{
	px_tell_tally(px);
	time_t t = now_s();
	for (struct conn *c = px->conns, *n; c; c = n) {
		n = c->next;
		if (c->st == S_RESOLVING)
			continue;
		if (c->st == S_HEAD && t - c->started > SB_PROXY_HEAD_S) {
			px_answer(px, c, 400, "sagebox: bad proxy request: %s%s", "no complete request head in time", "");
			continue;
		}
		if (c->lingering && t > c->linger_until) {
			px_conn_close(px, c);
			continue;
		}
		if (t - c->last > SB_PROXY_IDLE_S) {
			snprintf(c->connect_err, sizeof c->connect_err, "idle for %d s", SB_PROXY_IDLE_S);
			px_conn_close(px, c);
		}
	}
}

int sb_proxy_run(const struct sb_netlist *list, int audit_fd, int control_fd, int listen_fd, const char *who)
{
	struct proxy px = {.list = list, .audit_fd = audit_fd, .control_fd = control_fd};
	signal(SIGPIPE, SIG_IGN);
	px.ep = epoll_create1(EPOLL_CLOEXEC);
	if (px.ep < 0 || pipe2(px.resolved, O_CLOEXEC)) {
		perror("sagebox proxy");
		return 1;
	}
	px.resolved_h = (struct handle){K_RESOLVED, NULL};
	px.control_h = (struct handle){K_CONTROL, NULL};
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &px.resolved_h};
	epoll_ctl(px.ep, EPOLL_CTL_ADD, px.resolved[0], &ev);
	if (control_fd >= 0) {
		ev.data.ptr = &px.control_h;
		epoll_ctl(px.ep, EPOLL_CTL_ADD, control_fd, &ev);
	}
	if (listen_fd >= 0 && !listener_add(&px, listen_fd, 0, who)) {
		perror("sagebox proxy");
		return 1;
	}
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(px.ep, evs, 64, 1000);
		if (n < 0 && errno != EINTR) {
			perror("sagebox proxy: epoll_wait");
			return 1;
		}
		for (int i = 0; i < n; i++) {
			struct handle *h = evs[i].data.ptr;
			/* One event may have closed a connection another event of
			 * this batch names: check it is still listed. */
			if (h->kind == K_CLIENT || h->kind == K_UPSTREAM) {
				struct conn *c = h->p, *k = px.conns;
				while (k && k != c)
					k = k->next;
				if (!k)
					continue;
				if (h->kind == K_CLIENT)
					on_client(&px, c, evs[i].events);
				else
					on_upstream(&px, c, evs[i].events);
				for (k = px.conns; k && k != c; k = k->next)
					;
				if (k)
					settle(&px, c);
			} else if (h->kind == K_LISTENER) {
				accept_one(&px, h->p);
			} else if (h->kind == K_RESOLVED) {
				struct conn *c;
				if (read(px.resolved[0], &c, sizeof c) == sizeof c)
					px_resolved(&px, c);
			} else if (h->kind == K_CONTROL && on_control(&px, control_fd)) {
				close_all(&px); /* sagebox is gone: so are we, and our sockets with us */
				return 0;
			}
		}
		sweep(&px);
	}
}
