/* Where a request may go: the head parsed, the allow-list
 * asked, the name looked up on a short thread, every address checked
 * (DNS rebinding, SSRF) and exactly a checked one connected to; refusals
 * answered in one line (proxy_conn.c). The loop is proxy.c. */
#include "net/proxy_decide.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "net/dest.h"

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
	px_arm(px, c);
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
	px_answer(px, c, 502, "sagebox: cannot look up %s%s: the proxy is out of resources", c->req.host, "");
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
		px_arm(px, c);
		return;
	}
	if (!c->connect_err[0])
		snprintf(c->connect_err, sizeof c->connect_err, "no address to connect to");
	px_answer(px, c, 502, "sagebox: cannot connect to %s (%s)", c->req.host, c->connect_err);
}

/* The lookup is back: keep only the addresses the list lets us reach. */
void px_resolved(struct proxy *px, struct conn *c)
{
	if (c->st == S_DONE) { /* closed meanwhile */
		c->st = S_HEAD;
		px_conn_close(px, c);
		return;
	}
	c->st = S_HEAD;
	if (c->gai_rc) {
		snprintf(c->connect_err, sizeof c->connect_err, "lookup: %s", gai_strerror(c->gai_rc));
		px_answer(px, c, 502, "sagebox: cannot resolve %s (%s)", c->req.host, gai_strerror(c->gai_rc));
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
		px_answer(px, c, 403,
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
void px_decide(struct proxy *px, struct conn *c)
{
	const char *why;
	int rc = sb_proxy_req_parse(c->head, c->head_n, &c->req, &why);
	if (rc == 1)
		return;
	if (c->over_cap) {
		px_answer(px, c, 503, "sagebox: too many network connections at once from this sandbox (%d)%s",
			  SB_PROXY_CONNS_MAX, "");
		return;
	}
	if (rc < 0) {
		px_answer(px, c, 400, "sagebox: bad proxy request: %s%s", why, "");
		return;
	}
	c->have_req = true;
	if (!sb_netlist_allows(px->list, c->req.host, c->req.port)) {
		char hp[SB_NET_HOST_MAX + 16];
		bool v6 = c->req.host_is_ip && strchr(c->req.host, ':');
		snprintf(hp, sizeof hp, "%s%s%s:%u", v6 ? "[" : "", c->req.host, v6 ? "]" : "", c->req.port);
		px_answer(px, c, 403, "sagebox: %s is not in the network allow-list (setting: network)%s", hp, "");
		return;
	}
	/* What followed the head belongs to the tunnel, or to the request's
	 * body: that goes behind the rewritten head as c2u has room
	 * (px_feed_pending), up to the end of the message and no further. */
	size_t rest = c->head_n - c->req.head_len;
	if (c->req.connect) {
		memcpy(c->c2u.data, c->head + c->req.head_len, rest);
		c->c2u.len = rest;
	} else {
		if (c->req.upstream_len > BUF) {
			px_answer(px, c, 400, "sagebox: bad proxy request: %s%s", "the request head is too long", "");
			return;
		}
		memcpy(c->c2u.data, c->req.upstream, c->req.upstream_len);
		c->c2u.len = c->req.upstream_len;
		c->framed = true;
		sb_proxy_body_start(&c->body, c->head, c->req.head_len);
		c->pending_off = c->req.head_len;
		if (px_feed_pending(c)) {
			px_answer(px, c, 400, "sagebox: bad proxy request: %s%s", c->connect_err, "");
			return;
		}
	}
	start_lookup(px, c);
}

void px_connected(struct proxy *px, struct conn *c)
{
	int err = 0;
	socklen_t n = sizeof err;
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &n) || err) {
		snprintf(c->connect_err, sizeof c->connect_err, "connect: %s", strerror(err ? err : errno));
		connect_next(px, c);
		return;
	}
	c->st = S_RELAY;
	c->connected = true;
	if (c->req.connect) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		memcpy(c->u2c.data, ok, sizeof ok - 1);
		c->u2c.len = sizeof ok - 1;
	}
	px_arm(px, c);
}
