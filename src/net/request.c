#include "net/request.h"

#include <http_parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/buf.h"

/* What the callbacks collect. Every head is parsed again from its start
 * when more bytes come (heads are at most 16 KiB), so each callback sees a
 * field or value whole. */
struct collect {
	const char *url;
	size_t url_len;
	const char *host;       /* the Host header's value */
	size_t host_len;
	int hosts;              /* Host headers seen: more than one is refused */
	bool in_host_value, drop_value, done;
	bool last_was_value, folded; /* obs-fold: a value in two pieces */
	bool control;           /* a NUL or control byte in a header */
	bool bad_name;          /* a header name with a byte no name has */
	struct sb_buf out;      /* the head to send on (plain requests) */
	bool oom;
};

/* Hop-by-hop headers the proxy does not pass on (RFC 9110 7.6.1), and its
 * own: the upstream connection is always "Connection: close", so one
 * client connection carries one request to the host that was checked. */
static bool hop_by_hop(const char *f, size_t n)
{
	static const char *const names[] = {"connection", "proxy-connection", "keep-alive", "proxy-authorization",
					    "proxy-authenticate", "te", "trailer", "upgrade"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i]) == n && !strncasecmp(f, names[i], n))
			return true;
	return false;
}

/* http-parser lets a NUL or other control byte through in a header value;
 * sent on, a server that reads up to the NUL would see another header. */
static bool has_control(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
			return true;
	return false;
}

/* A header name is a token (RFC 9110 5.1): http-parser, as Debian builds
 * it, lets a space through, and "Host : evil.test" would go on as another
 * header beside the Host the proxy adds. RFC 9112 5.1: answer 400. */
static bool is_token(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch && strchr("!#$%&'*+-.^_`|~", ch))))
			return false;
	}
	return true;
}

static void put(struct collect *c, const char *s, size_t n)
{
	if (sb_buf_append(&c->out, s, n))
		c->oom = true;
}

static int on_url(http_parser *p, const char *at, size_t n)
{
	struct collect *c = p->data;
	c->url = at;
	c->url_len = n;
	return 0;
}

static int on_field(http_parser *p, const char *at, size_t n)
{
	struct collect *c = p->data;
	c->last_was_value = false;
	c->control |= has_control(at, n);
	c->bad_name |= !is_token(at, n);
	c->in_host_value = n == 4 && !strncasecmp(at, "host", 4);
	c->hosts += c->in_host_value;
	c->drop_value = hop_by_hop(at, n);
	if (!c->drop_value) {
		put(c, at, n);
		put(c, ": ", 2);
	}
	return 0;
}

static int on_value(http_parser *p, const char *at, size_t n)
{
	struct collect *c = p->data;
	c->folded |= c->last_was_value;
	c->control |= has_control(at, n);
	c->last_was_value = true;
	if (c->in_host_value) {
		c->host = at;
		c->host_len = n;
	}
	if (!c->drop_value) {
		put(c, at, n);
		put(c, "\r\n", 2);
	}
	return 0;
}

static int on_headers_complete(http_parser *p)
{
	struct collect *c = p->data;
	c->done = true;
	http_parser_pause(p, 1);
	return 0;
}

/* "name", "name:port", "[v6]:port" into r's host and port. */
static const char *authority(const char *s, size_t n, unsigned default_port, char *host, bool *is_ip,
			     unsigned *port)
{
	const char *colon = NULL;
	for (size_t i = n; i-- > 0;) {
		if (s[i] == ']')
			break;
		if (s[i] == ':') {
			colon = s + i;
			break;
		}
	}
	*port = default_port;
	if (colon) {
		unsigned long v = 0;
		size_t digits = (size_t)(s + n - colon - 1);
		if (!digits || digits > 5)
			return "a port must be a number from 1 to 65535";
		for (const char *d = colon + 1; d < s + n; d++) {
			if (*d < '0' || *d > '9')
				return "a port must be a number from 1 to 65535";
			v = v * 10 + (unsigned long)(*d - '0');
		}
		if (v < 1 || v > 65535)
			return "a port must be a number from 1 to 65535";
		*port = (unsigned)v;
		n = (size_t)(colon - s);
	}
	if (!*port)
		return "CONNECT needs host:port";
	if (sb_net_host_normalise(s, n, host, SB_NET_HOST_MAX, is_ip))
		return "not a valid host name or address";
	return NULL;
}

int sb_proxy_req_parse(const char *buf, size_t len, struct sb_proxy_req *r, const char **why)
{
	static const http_parser_settings settings = {
		.on_url = on_url,
		.on_header_field = on_field,
		.on_header_value = on_value,
		.on_headers_complete = on_headers_complete,
	};
	struct collect c = {0};
	http_parser p;
	memset(r, 0, sizeof *r);
	http_parser_init(&p, HTTP_REQUEST);
	p.data = &c;
	size_t used = http_parser_execute(&p, &settings, buf, len);
	enum http_errno e = HTTP_PARSER_ERRNO(&p);
	int rc = -1;
	*why = NULL;
	if (!c.done && e == HPE_OK) {
		rc = len >= SB_PROXY_HEAD_MAX ? -1 : 1;
		*why = rc < 0 ? "the request head is longer than 16 KiB" : NULL;
		goto out;
	}
	if (!c.done || (e != HPE_OK && e != HPE_PAUSED)) {
		*why = "not an HTTP/1 request";
		goto out;
	}
	/* The byte that completed the head was consumed by the callback. */
	r->head_len = used + (e == HPE_PAUSED && used < len);
	if (r->head_len > SB_PROXY_HEAD_MAX) {
		*why = "the request head is longer than 16 KiB";
		goto out;
	}
	if (c.oom) {
		*why = "out of memory";
		goto out;
	}
	if (c.control) {
		*why = "a control character in a header";
		goto out;
	}
	if (c.bad_name) {
		*why = "a header name with a space or another byte names cannot have";
		goto out;
	}
	if (c.folded) {
		*why = "folded header lines are not accepted";
		goto out;
	}
	if (c.hosts > 1) {
		*why = "more than one Host header";
		goto out;
	}
	r->connect = p.method == HTTP_CONNECT;
	struct http_parser_url u;
	http_parser_url_init(&u);
	if (!c.url || http_parser_parse_url(c.url, c.url_len, r->connect, &u)) {
		*why = r->connect ? "CONNECT needs host:port" : "the request target must be an http:// URL";
		goto out;
	}
#define FIELD(f) (c.url + u.field_data[f].off), u.field_data[f].len
#define HAS(f) (u.field_set & (1 << (f)))
	if (HAS(UF_USERINFO)) {
		*why = "credentials in the URL are not passed on";
		goto out;
	}
	char auth[SB_NET_HOST_MAX + 16];
	size_t auth_len;
	if (r->connect) {
		auth_len = c.url_len;
	} else {
		if (!HAS(UF_SCHEMA) || u.field_data[UF_SCHEMA].len != 4 || strncasecmp(c.url, "http", 4) ||
		    !HAS(UF_HOST)) {
			*why = "the request target must be an http:// URL (https goes through CONNECT)";
			goto out;
		}
		/* The authority: the host and the port as written. */
		size_t from = u.field_data[UF_HOST].off, to = from + u.field_data[UF_HOST].len;
		if (from > 0 && c.url[from - 1] == '[')
			from--, to++;
		if (HAS(UF_PORT))
			to = u.field_data[UF_PORT].off + u.field_data[UF_PORT].len;
		auth_len = to - from;
		if (auth_len >= sizeof auth) {
			*why = "not a valid host name or address";
			goto out;
		}
		memcpy(auth, c.url + from, auth_len);
	}
	if (r->connect) {
		if (auth_len >= sizeof auth) {
			*why = "not a valid host name or address";
			goto out;
		}
		memcpy(auth, c.url, auth_len);
	}
	if ((*why = authority(auth, auth_len, r->connect ? 0 : 80, r->host, &r->host_is_ip, &r->port)))
		goto out;
	/* The name checked is the one connected to: a Host header naming
	 * another host is refused, not sent on to whoever answers there. */
	if (c.host) {
		char hh[SB_NET_HOST_MAX];
		bool hip;
		unsigned hport;
		if (authority(c.host, c.host_len, r->port, hh, &hip, &hport) || strcmp(hh, r->host) ||
		    hport != r->port) {
			*why = "the Host header and the requested host disagree";
			goto out;
		}
	}
	if (!r->connect) {
		struct sb_buf head = {0};
		char line[64];
		const char *method = http_method_str(p.method);
		int ok = !sb_buf_append(&head, method, strlen(method)) && !sb_buf_append(&head, " ", 1);
		if (HAS(UF_PATH))
			ok = ok && !sb_buf_append(&head, FIELD(UF_PATH));
		else
			ok = ok && !sb_buf_append(&head, "/", 1);
		if (HAS(UF_QUERY))
			ok = ok && !sb_buf_append(&head, "?", 1) && !sb_buf_append(&head, FIELD(UF_QUERY));
		snprintf(line, sizeof line, " HTTP/%u.%u\r\n", p.http_major, p.http_minor);
		ok = ok && !sb_buf_append(&head, line, strlen(line));
		if (!c.host)
			ok = ok && !sb_buf_append(&head, "Host: ", 6) && !sb_buf_append(&head, auth, auth_len) &&
			     !sb_buf_append(&head, "\r\n", 2);
		ok = ok && !sb_buf_append(&head, c.out.data ? c.out.data : "", c.out.len) &&
		     !sb_buf_append(&head, "Connection: close\r\n\r\n", 21);
		if (!ok) {
			sb_buf_free(&head);
			*why = "out of memory";
			goto out;
		}
		r->upstream = head.data;
		r->upstream_len = head.len;
	}
#undef FIELD
#undef HAS
	rc = 0;
out:
	sb_buf_free(&c.out);
	return rc;
}

void sb_proxy_req_free(struct sb_proxy_req *r)
{
	free(r->upstream);
	r->upstream = NULL;
}

static int body_complete(http_parser *p)
{
	struct sb_proxy_body *b = p->data;
	b->done = true;
	http_parser_pause(p, 1); /* execute returns the message's bytes, through its last */
	return 0;
}

static const http_parser_settings body_settings = {.on_message_complete = body_complete};

void sb_proxy_body_start(struct sb_proxy_body *b, const char *head, size_t head_len)
{
	memset(b, 0, sizeof *b);
	http_parser_init(&b->p, HTTP_REQUEST);
	b->p.data = b;
	/* The head was accepted by the same parser: this ends at its end, at
	 * the body, or done (no body). */
	http_parser_execute(&b->p, &body_settings, head, head_len);
	if (HTTP_PARSER_ERRNO(&b->p) != HPE_OK && !b->done)
		b->done = true; /* cannot happen: the head parsed before */
}

ssize_t sb_proxy_body_take(struct sb_proxy_body *b, const char *buf, size_t len, const char **why)
{
	*why = NULL;
	if (b->done)
		return 0;
	size_t used = http_parser_execute(&b->p, &body_settings, buf, len);
	if (b->done)
		return (ssize_t)used;
	if (HTTP_PARSER_ERRNO(&b->p) != HPE_OK) {
		*why = http_errno_description(HTTP_PARSER_ERRNO(&b->p));
		return -1;
	}
	return (ssize_t)len;
}
