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

#define BUF 16384

enum kind { K_LISTENER, K_CLIENT, K_UPSTREAM, K_CONTROL, K_RESOLVED };
enum state { S_HEAD, S_RESOLVING, S_CONNECTING, S_RELAY, S_DONE };

struct handle {
	enum kind kind;
	void *p;
};

struct listener {
	struct handle h;
	int fd;
	unsigned id;
	char who[128];
	unsigned conns;
	uint64_t up, down; /* bytes over the sandbox's life */
	bool gone;         /* "del": closed, freed when its last connection ends */
	struct listener *next;
};

struct pipe_buf {
	char data[BUF];
	size_t off, len;
};

struct conn {
	struct handle hc, hu;
	struct listener *l;
	int cfd, ufd;
	enum state st;
	char head[SB_PROXY_HEAD_MAX];
	size_t head_n;
	struct sb_proxy_req req;
	bool have_req;
	struct addrinfo *ai, *next_ai;
	int gai_rc;
	char refused[320];        /* the reason, for the audit line */
	char connect_err[160];
	struct pipe_buf c2u, u2c;
	bool c_eof, u_eof, close_after_flush, allowed;
	uint64_t up, down;
	time_t started, last;
	struct conn *next;
};

struct proxy {
	const struct sb_netlist *list;
	int ep, audit_fd, resolved[2];
	struct listener *listeners;
	struct conn *conns;
	struct handle resolved_h, control_h;
};

static time_t now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec;
}

static void audit(struct proxy *px, struct conn *c)
{
	if (px->audit_fd < 0)
		return;
	json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:b, s:s?, s:I, s:I}", "event", "network", "sandbox",
			      c->l->who, "host", c->have_req ? c->req.host : "", "port",
			      c->have_req ? (int)c->req.port : 0, "allowed", c->allowed, "reason",
			      c->refused[0] ? c->refused : c->connect_err[0] ? c->connect_err : NULL, "bytes_up",
			      (json_int_t)c->up, "bytes_down", (json_int_t)c->down);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (s) {
		size_t n = strlen(s);
		s[n] = '\n'; /* json_dumps leaves room only for its NUL: write n + 1 of it */
		if (write(px->audit_fd, s, n + 1) < 0) {
			/* the log is best effort here: the connection is already decided */
		}
	}
	free(s);
	json_decref(o);
}

/* Interest of one end, from the buffers: read while there is room and no
 * EOF, write while there is something to send. */
static void arm(struct proxy *px, struct conn *c)
{
	struct epoll_event ev;
	if (c->cfd >= 0) {
		ev.events = 0;
		if (c->st == S_HEAD || (c->st == S_RELAY && !c->c_eof && c->c2u.len < BUF && !c->close_after_flush))
			ev.events |= EPOLLIN;
		if (c->u2c.len)
			ev.events |= EPOLLOUT;
		ev.data.ptr = &c->hc;
		epoll_ctl(px->ep, EPOLL_CTL_MOD, c->cfd, &ev);
	}
	if (c->ufd >= 0) {
		ev.events = 0;
		if (c->st == S_CONNECTING)
			ev.events = EPOLLOUT;
		else {
			if (!c->u_eof && c->u2c.len < BUF)
				ev.events |= EPOLLIN;
			if (c->c2u.len)
				ev.events |= EPOLLOUT;
		}
		ev.data.ptr = &c->hu;
		epoll_ctl(px->ep, EPOLL_CTL_MOD, c->ufd, &ev);
	}
}

static void listener_free(struct proxy *px, struct listener *l)
{
	for (struct listener **p = &px->listeners; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
	if (l->fd >= 0)
		close(l->fd);
	free(l);
}

static void conn_close(struct proxy *px, struct conn *c)
{
	if (c->st == S_RESOLVING) { /* the lookup thread still holds it: finish when it reports */
		c->st = S_DONE;
		return;
	}
	audit(px, c);
	if (c->cfd >= 0)
		close(c->cfd);
	if (c->ufd >= 0)
		close(c->ufd);
	if (c->ai)
		freeaddrinfo(c->ai);
	if (c->have_req)
		sb_proxy_req_free(&c->req);
	for (struct conn **p = &px->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	struct listener *l = c->l;
	free(c);
	if (--l->conns == 0 && l->gone)
		listener_free(px, l);
}

/* Answer the client and close once it is sent: 403 for a refusal, 400 for
 * a request that is not one, 502 when the host cannot be reached. The body
 * is one line, for the model that reads the error. */
__attribute__((format(printf, 4, 5))) static void answer(struct proxy *px, struct conn *c, int code,
							  const char *fmt, ...)
{
	const char *phrase = code == 403 ? "Forbidden" : code == 400 ? "Bad Request" : code == 504 ? "Gateway Timeout"
							      : "Bad Gateway";
	char body[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(body, sizeof body, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof body - 1)
		n = (int)strlen(body);
	body[n++] = '\n';
	body[n] = '\0';
	if (code == 403 || code == 400)
		snprintf(c->refused, sizeof c->refused, "%.*s", n - 1, body);
	int h = snprintf(c->u2c.data, BUF,
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n"
			 "Connection: close\r\nX-Sagebox-Refused: network\r\n\r\n%s",
			 code, phrase, n, body);
	c->u2c.off = 0;
	c->u2c.len = h > 0 && h < BUF ? (size_t)h : 0;
	c->close_after_flush = true;
	if (c->ufd >= 0) {
		close(c->ufd);
		c->ufd = -1;
	}
	c->st = S_RELAY;
	c->u_eof = true;
	arm(px, c);
}

/* A lookup thread: resolve, then hand the connection back to the loop
 * through a pipe (a pointer is written whole: PIPE_BUF). */
struct lookup_job {
	struct conn *c;
	int done_fd;
};

static void *lookup(void *arg)
{
	struct lookup_job *j = arg;
	struct conn *c = j->c;
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	char port[8];
	snprintf(port, sizeof port, "%u", c->req.port);
	c->gai_rc = getaddrinfo(c->req.host, port, &hints, &c->ai);
	if (write(j->done_fd, &c, sizeof c) != sizeof c)
		abort(); /* the loop would wait for ever: better the proxy ends, and its sockets with it */
	free(j);
	return NULL;
}

static void start_lookup(struct proxy *px, struct conn *c)
{
	pthread_t t;
	pthread_attr_t a;
	struct lookup_job *j = malloc(sizeof *j);
	c->st = S_RESOLVING;
	arm(px, c);
	if (j) {
		*j = (struct lookup_job){c, px->resolved[1]};
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&a, 256 * 1024);
		int rc = pthread_create(&t, &a, lookup, j);
		pthread_attr_destroy(&a);
		if (!rc)
			return;
		free(j);
	}
	c->st = S_HEAD;
	answer(px, c, 502, "sagebox: cannot look up %s%s: the proxy is out of resources", c->req.host, "");
}

/* Try the next allowed address; 502 when none is left. */
static void connect_next(struct proxy *px, struct conn *c)
{
	for (; c->next_ai; c->next_ai = c->next_ai->ai_next) {
		struct addrinfo *a = c->next_ai;
		if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
			continue;
		if (c->ufd >= 0) {
			epoll_ctl(px->ep, EPOLL_CTL_DEL, c->ufd, NULL);
			close(c->ufd);
		}
		c->ufd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->ufd < 0)
			continue;
		if (connect(c->ufd, a->ai_addr, a->ai_addrlen) && errno != EINPROGRESS) {
			snprintf(c->connect_err, sizeof c->connect_err, "connect: %s", strerror(errno));
			close(c->ufd);
			c->ufd = -1;
			continue;
		}
		struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = &c->hu};
		epoll_ctl(px->ep, EPOLL_CTL_ADD, c->ufd, &ev);
		c->st = S_CONNECTING;
		c->next_ai = a->ai_next;
		arm(px, c);
		return;
	}
	if (!c->connect_err[0])
		snprintf(c->connect_err, sizeof c->connect_err, "no address to connect to");
	answer(px, c, 502, "sagebox: cannot connect to %s (%s)", c->req.host, c->connect_err);
}

/* The lookup is back: keep only the addresses the list lets us reach. */
static void resolved(struct proxy *px, struct conn *c)
{
	if (c->st == S_DONE) { /* closed meanwhile */
		c->st = S_HEAD;
		conn_close(px, c);
		return;
	}
	c->st = S_HEAD;
	if (c->gai_rc) {
		snprintf(c->connect_err, sizeof c->connect_err, "lookup: %s", gai_strerror(c->gai_rc));
		answer(px, c, 502, "sagebox: cannot resolve %s (%s)", c->req.host, gai_strerror(c->gai_rc));
		return;
	}
	struct addrinfo **p = &c->ai, *kept = NULL, **tail = &kept;
	char first_bad[INET6_ADDRSTRLEN] = "";
	const char *first_why = NULL;
	while (*p) {
		struct addrinfo *a = *p;
		*p = a->ai_next;
		a->ai_next = NULL;
		const char *cls = sb_net_addr_class(a->ai_addr);
		char text[INET6_ADDRSTRLEN];
		sb_net_addr_text(a->ai_addr, text, sizeof text);
		/* DNS rebinding and SSRF: a listed name that resolves into this
		 * machine, the LAN or the metadata service is refused, unless the
		 * user listed that address too. We connect to exactly the address
		 * checked here: no second lookup to rebind. */
		if (cls && !sb_netlist_allows(px->list, text, c->req.port)) {
			if (!first_why) {
				first_why = cls;
				snprintf(first_bad, sizeof first_bad, "%s", text);
			}
			freeaddrinfo(a);
			continue;
		}
		*tail = a;
		tail = &a->ai_next;
	}
	c->ai = kept;
	if (!kept) {
		char what[INET6_ADDRSTRLEN + 128];
		snprintf(what, sizeof what, "%s, %s", first_bad, first_why ? first_why : "no address");
		answer(px, c, 403,
		       "sagebox: %s resolves to %s, reached only when that address is in the network allow-list "
		       "too (setting: network)",
		       c->req.host, what);
		return;
	}
	c->allowed = true;
	c->next_ai = kept;
	connect_next(px, c);
}

/* The head is complete: check it against the list. */
static void decide(struct proxy *px, struct conn *c)
{
	const char *why;
	int rc = sb_proxy_req_parse(c->head, c->head_n, &c->req, &why);
	if (rc == 1)
		return;
	if (rc < 0) {
		answer(px, c, 400, "sagebox: bad proxy request: %s%s", why, "");
		return;
	}
	c->have_req = true;
	if (!sb_netlist_allows(px->list, c->req.host, c->req.port)) {
		char hp[SB_NET_HOST_MAX + 16];
		bool v6 = c->req.host_is_ip && strchr(c->req.host, ':');
		snprintf(hp, sizeof hp, "%s%s%s:%u", v6 ? "[" : "", c->req.host, v6 ? "]" : "", c->req.port);
		answer(px, c, 403, "sagebox: %s is not in the network allow-list (setting: network)%s", hp, "");
		return;
	}
	/* What followed the head belongs to the tunnel or the request's body. */
	size_t rest = c->head_n - c->req.head_len;
	if (c->req.connect) {
		memcpy(c->c2u.data, c->head + c->req.head_len, rest);
		c->c2u.len = rest;
	} else {
		if (c->req.upstream_len + rest > BUF) {
			answer(px, c, 400, "sagebox: bad proxy request: %s%s", "the request head is too long", "");
			return;
		}
		memcpy(c->c2u.data, c->req.upstream, c->req.upstream_len);
		memcpy(c->c2u.data + c->req.upstream_len, c->head + c->req.head_len, rest);
		c->c2u.len = c->req.upstream_len + rest;
	}
	start_lookup(px, c);
}

static void connected(struct proxy *px, struct conn *c)
{
	int err = 0;
	socklen_t n = sizeof err;
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &n) || err) {
		snprintf(c->connect_err, sizeof c->connect_err, "connect: %s", strerror(err ? err : errno));
		connect_next(px, c);
		return;
	}
	c->st = S_RELAY;
	if (c->req.connect) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		memcpy(c->u2c.data, ok, sizeof ok - 1);
		c->u2c.len = sizeof ok - 1;
	}
	arm(px, c);
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
			conn_close(px, c);
			return;
		}
		c->head_n += (size_t)r;
		c->up += (uint64_t)r;
		c->l->up += (uint64_t)r;
		decide(px, c);
		return;
	}
	if ((ev & EPOLLOUT) && drain(c->cfd, &c->u2c)) {
		conn_close(px, c);
		return;
	}
	if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->c_eof && !c->close_after_flush) {
		if (fill(c->cfd, &c->c2u, &c->c_eof, &c->up, &c->l->up)) {
			conn_close(px, c);
			return;
		}
	}
}

static void on_upstream(struct proxy *px, struct conn *c, uint32_t ev)
{
	c->last = now_s();
	if (c->st == S_CONNECTING) {
		connected(px, c);
		return;
	}
	if ((ev & EPOLLOUT) && drain(c->ufd, &c->c2u)) {
		conn_close(px, c);
		return;
	}
	if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->u_eof)
		if (fill(c->ufd, &c->u2c, &c->u_eof, &c->down, &c->l->down) && !c->u2c.len) {
			conn_close(px, c);
			return;
		}
}

/* After any event: pass EOFs on, enforce the byte caps, close what is done. */
static void settle(struct proxy *px, struct conn *c)
{
	if (c->st != S_RELAY) {
		arm(px, c);
		return;
	}
	if (c->l->up > SB_PROXY_BYTES_MAX || c->l->down > SB_PROXY_BYTES_MAX) {
		snprintf(c->connect_err, sizeof c->connect_err, "the sandbox's network byte cap was reached");
		conn_close(px, c);
		return;
	}
	if (c->close_after_flush) {
		if (!c->u2c.len)
			conn_close(px, c);
		else
			arm(px, c);
		return;
	}
	if (c->c_eof && !c->c2u.len && c->ufd >= 0)
		shutdown(c->ufd, SHUT_WR);
	if (c->u_eof && !c->u2c.len)
		shutdown(c->cfd, SHUT_WR);
	if (c->c_eof && c->u_eof && !c->c2u.len && !c->u2c.len) {
		conn_close(px, c);
		return;
	}
	arm(px, c);
}

static void accept_one(struct proxy *px, struct listener *l)
{
	int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	struct conn *c = l->conns >= SB_PROXY_CONNS_MAX ? NULL : calloc(1, sizeof *c);
	if (!c) {
		static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 69\r\nConnection: close\r\n\r\n"
					   "sagebox: too many network connections at once from this sandbox (32)\n";
		char sink[4096];
		/* What the client already sent is read first: closing a Unix
		 * socket with unread data resets it, and the 503 would be lost. */
		while (recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0)
			;
		if (send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			/* nothing more to say to it */
		}
		close(fd);
		return;
	}
	c->hc = (struct handle){K_CLIENT, c};
	c->hu = (struct handle){K_UPSTREAM, c};
	c->l = l;
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
				conn_close(px, c); /* may free l with its last connection */
				left--;
			}
		}
		/* conn_close freed l when it was the last; else the lookups left free it */
		for (struct listener *k = px->listeners; k; k = k->next)
			if (k == l && !l->conns)
				listener_free(px, l);
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
	return 0;
}

static void sweep(struct proxy *px)
{
	time_t t = now_s();
	for (struct conn *c = px->conns, *n; c; c = n) {
		n = c->next;
		if (c->st == S_RESOLVING)
			continue;
		if (c->st == S_HEAD && t - c->started > SB_PROXY_HEAD_S) {
			answer(px, c, 400, "sagebox: bad proxy request: %s%s", "no complete request head in time", "");
			continue;
		}
		if (t - c->last > SB_PROXY_IDLE_S) {
			snprintf(c->connect_err, sizeof c->connect_err, "idle for %d s", SB_PROXY_IDLE_S);
			conn_close(px, c);
		}
	}
}

int sb_proxy_run(const struct sb_netlist *list, int audit_fd, int control_fd, int listen_fd, const char *who)
{
	struct proxy px = {.list = list, .audit_fd = audit_fd};
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
					resolved(&px, c);
			} else if (h->kind == K_CONTROL && on_control(&px, control_fd)) {
				return 0; /* sagebox is gone: so are we, and our sockets with us */
			}
		}
		sweep(&px);
	}
}
