/* A connection's life, on behalf of both halves of the proxy (the loop,
 * proxy.c, and where a request may go, proxy_decide.c): its epoll
 * interest, what of the client's goes upstream with the head, our answer
 * to it, its audit line, the report of a refusal to sagebox, its end. */
#include "net/proxy_conn.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/proxy_control.h"

void px_audit_line(struct proxy *px, const char *who, const char *host, unsigned port, bool allowed,
		   const char *reason, uint64_t up, uint64_t down)
{
	if (px->audit_fd < 0)
		return;
	json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:b, s:s?, s:I, s:I}", "event", "network", "sandbox", who,
			      "host", host, "port", (int)port, "allowed", allowed, "reason", reason, "bytes_up",
			      (json_int_t)up, "bytes_down", (json_int_t)down);
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

void px_audit(struct proxy *px, struct conn *c)
{
	px_audit_line(px, c->who, c->have_req ? c->req.host : "", c->have_req ? c->req.port : 0, c->allowed,
		   c->refused[0] ? c->refused : c->connect_err[0] ? c->connect_err : NULL, c->up, c->down);
}

/* Whether the client's next bytes can be taken now: relayed (room in c2u,
 * nothing that came with the head still waiting), or dropped (after the
 * request's message, or after our answer). */
bool px_client_readable(const struct conn *c)
{
	if (c->c_eof)
		return false;
	if (c->close_after_flush || (c->framed && c->body.done))
		return true;
	return !px_pending(c) && c->c2u.len < BUF;
}

/* Interest of one end, from the buffers: read while there is room and no
 * EOF, write while there is something to send. */
void px_arm(struct proxy *px, struct conn *c)
{
	struct epoll_event ev;
	if (c->cfd >= 0) {
		ev.events = 0;
		if (c->st == S_HEAD || (c->st == S_RELAY && px_client_readable(c)))
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

void px_listener_free(struct proxy *px, struct listener *l)
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

void px_tell_tally(struct proxy *px)
{
	if (sb_proxy_tally_send(px->control_fd, px->untold) == 0)
		memset(px->untold, 0, sizeof px->untold);
}

void px_conn_close(struct proxy *px, struct conn *c)
{
	if (c->st == S_RESOLVING || c->st == S_DONE) { /* the lookup thread still holds it: finish when it reports */
		c->st = S_DONE;
		return;
	}
	if (!c->audited)
		px_audit(px, c);
	px->untold[c->refused[0] ? PX_REFUSED : c->connected ? PX_ALLOWED : PX_FAILED]++;
	px_tell_tally(px);
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
	if (c->over_cap)
		l->over--;
	free(c);
	if (--l->conns == 0 && l->gone)
		px_listener_free(px, l);
}

/* A plain request's new bytes at the end of c2u (from `before` on): keep
 * the message's, drop what follows it. -1: its framing is broken (these
 * bytes and all after them stay here). */
int px_frame(struct conn *c, size_t before)
{
	const char *why;
	char *at = c->c2u.data + c->c2u.off + before;
	ssize_t n = sb_proxy_body_take(&c->body, at, c->c2u.len - before, &why);
	if (n < 0) {
		snprintf(c->connect_err, sizeof c->connect_err, "the request body's framing is broken: %s", why);
		c->body.done = true;
		c->c2u.len = before;
		return -1;
	}
	c->c2u.len = before + (size_t)n;
	return 0;
}

int px_feed_pending(struct conn *c)
{
	struct pipe_buf *b = &c->c2u;
	if (b->off && b->len == 0)
		b->off = 0;
	size_t room = BUF - b->off - b->len, n = px_pending(c);
	n = n < room ? n : room;
	if (!n)
		return 0;
	memcpy(b->data + b->off + b->len, c->head + c->pending_off, n);
	size_t before = b->len;
	b->len += n;
	c->pending_off += n;
	int rc = px_frame(c, before);
	if (rc || c->body.done)
		c->pending_off = c->head_n; /* the rest is not the request's: never sent */
	return rc;
}

/* Tell sagebox what we refused this connection, and why, before the code
 * hears it: the runner then has it when the code's call ends, and the
 * result names the host from what the proxy did, not from what the code
 * printed. */
static void report(struct proxy *px, const struct conn *c, int code, const char *why, size_t why_len)
{
	struct sb_net_refusal r = {.status = (unsigned)code, .port = c->have_req ? c->req.port : 0};
	snprintf(r.sandbox, sizeof r.sandbox, "%s", c->who);
	snprintf(r.host, sizeof r.host, "%s", c->have_req ? c->req.host : "");
	if (why_len > 9 && !strncmp(why, "sagebox: ", 9)) {
		why += 9;
		why_len -= 9;
	}
	snprintf(r.why, sizeof r.why, "%.*s", (int)why_len, why);
	sb_proxy_refusal_send(px->control_fd, c->l->id, &r);
}

/* Answer the client and close once it is sent: 403 for a refusal, 400 for
 * a request that is not one, 502 when the host cannot be reached. The body
 * is one line, for the model that reads the error. */
void px_answer(struct proxy *px, struct conn *c, int code, const char *fmt, ...)
{
	const char *phrase = code == 403   ? "Forbidden"
			     : code == 400 ? "Bad Request"
			     : code == 503 ? "Service Unavailable"
			     : code == 504 ? "Gateway Timeout"
					   : "Bad Gateway";
	char body[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(body, sizeof body - 1, fmt, ap); /* room for the '\n' */
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof body - 1)
		n = (int)strlen(body);
	body[n++] = '\n';
	body[n] = '\0';
	if (code == 403 || code == 400 || code == 503)
		snprintf(c->refused, sizeof c->refused, "%.*s", n - 1, body);
	report(px, c, code, body, (size_t)n - 1);
	int h = snprintf(c->u2c.data, BUF,
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n"
			 "Connection: close\r\nX-Sagebox-Refused: network\r\n\r\n%s",
			 code, phrase, n, body);
	c->u2c.off = 0;
	c->u2c.len = h > 0 && h < BUF ? (size_t)h : 0;
	c->close_after_flush = true;
	c->pending_off = c->head_n; /* nothing more of the client's goes anywhere */
	if (c->ufd >= 0) {
		close(c->ufd);
		c->ufd = -1;
	}
	c->st = S_RELAY;
	c->u_eof = true;
	px_arm(px, c);
}

