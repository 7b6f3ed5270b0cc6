#include "transport/http_options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/fd.h"

void sb_http_options_defaults(struct sb_http_options *o)
{
	memset(o, 0, sizeof *o);
	o->limits = (struct sb_http_limits){
		.max_body = SB_HTTP_MAX_BODY,
		.max_inflight_client = SB_HTTP_MAX_INFLIGHT_CLIENT,
		.max_inflight_total = SB_HTTP_MAX_INFLIGHT_TOTAL,
		.max_sessions_client = SB_HTTP_MAX_SESSIONS_CLIENT,
		.session_idle_s = SB_HTTP_SESSION_IDLE_S,
	};
	o->max_connections = SB_HTTP_MAX_CONNECTIONS;
	o->request_timeout_s = SB_HTTP_REQUEST_TIMEOUT_S;
	o->idle_timeout_s = SB_HTTP_IDLE_TIMEOUT_S;
	snprintf(o->bind.addr, sizeof o->bind.addr, "127.0.0.1");
	o->bind.loopback = true;
	sb_instance_default(o->instance);
}

int sb_http_parse_listen(const char *spec, struct sb_http_options *o, struct sb_error *err)
{
	return sb_http_parse_bind("--http", spec, &o->bind, err);
}

int sb_http_parse_bind(const char *flag, const char *spec, struct sb_http_bind *b, struct sb_error *err)
{
	char host[64] = "127.0.0.1";
	const char *port = spec;
	const char *colon = strrchr(spec, ':');
	if (colon) {
		const char *h = spec;
		size_t n = (size_t)(colon - spec);
		if (n >= 2 && h[0] == '[' && h[n - 1] == ']')
			h++, n -= 2;
		if (n == 0 || n >= sizeof host)
			return sb_fail(err, "%s %s: the address is empty or too long", flag, spec);
		memcpy(host, h, n);
		host[n] = '\0';
		port = colon + 1;
	}
	char *end;
	errno = 0;
	unsigned long p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p > 65535)
		return sb_fail(err, "%s %s: the port must be a number from 0 to 65535", flag, spec),
		       sb_hint(err, "for example %s 8080 or %s 127.0.0.1:8080", flag, flag);
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof host, "127.0.0.1");
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, host, &a4) == 1) {
		b->loopback = (ntohl(a4.s_addr) >> 24) == 127;
		b->wildcard = a4.s_addr == htonl(INADDR_ANY);
	} else if (inet_pton(AF_INET6, host, &a6) == 1) {
		b->loopback = IN6_IS_ADDR_LOOPBACK(&a6);
		b->wildcard = IN6_IS_ADDR_UNSPECIFIED(&a6);
	} else {
		return sb_fail(err, "%s %s: '%s' is not an IP address", flag, spec, host),
		       sb_hint(err, "give a numeric address (127.0.0.1, ::1, 0.0.0.0) or localhost");
	}
	snprintf(b->addr, sizeof b->addr, "%s", host);
	b->port = (unsigned)p;
	return 0;
}

/* What must hold before anything listens. */
int sb_http_check_options(const struct sb_http_options *o, struct sb_error *err)
{
	if (!!o->tls_cert != !!o->tls_key)
		return sb_fail(err, "--tls-cert and --tls-key go together"),
		       sb_hint(err, "give both PEM files, or neither");
	if (!o->bind.loopback && !o->allow_remote)
		return sb_fail(err, "%s is not a loopback address", o->bind.addr),
		       sb_hint(err, "listening beyond this machine needs --allow-remote (and TLS: --tls-cert/--tls-key, "
				    "or a TLS reverse proxy; docs/DEPLOY.md)");
	if (o->metrics_listen && !o->metrics_bind.loopback && !o->allow_remote)
		return sb_fail(err, "--metrics-listen %s is not a loopback address", o->metrics_bind.addr),
		       sb_hint(err, "serving the metrics beyond this machine needs --allow-remote");
	if (o->no_auth && !o->bind.loopback)
		return sb_fail(err, "--insecure-no-auth is allowed only on a loopback address (127.0.0.1 or ::1)"),
		       sb_hint(err, "anyone who can reach %s could run code; use a token", o->bind.addr);
	if (o->no_auth && o->token_file)
		return sb_fail(err, "--insecure-no-auth and --token-file contradict each other");
	if (o->tls_cert && !MHD_is_feature_supported(MHD_FEATURE_TLS))
		return sb_fail(err, "this libmicrohttpd was built without TLS"),
		       sb_hint(err, "terminate TLS in a reverse proxy instead (docs/DEPLOY.md)");
	return 0;
}

unsigned sb_http_header_timeout(const struct sb_http_options *o)
{
	return o->request_timeout_s < SB_HTTP_HEADER_TIMEOUT_S ? o->request_timeout_s : SB_HTTP_HEADER_TIMEOUT_S;
}

socklen_t sb_http_sockaddr(const struct sb_http_bind *b, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (strchr(b->addr, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)b->port);
		inet_pton(AF_INET6, b->addr, &a->sin6_addr);
		return sizeof *a;
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)b->port);
	inet_pton(AF_INET, b->addr, &a->sin_addr);
	return sizeof *a;
}

void sb_http_url_format(const struct sb_http_bind *b, unsigned port, bool tls, char *buf, size_t size)
{
	bool v6 = strchr(b->addr, ':') != NULL;
	snprintf(buf, size, "%s://%s%s%s:%u/mcp", tls ? "https" : "http", v6 ? "[" : "", b->addr, v6 ? "]" : "", port);
}

static char *read_file(const char *path, struct sb_error *err)
{
	SB_AUTO_FD fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return sb_fail_errno(err, "cannot open %s", path), NULL;
	struct sb_buf b = {0};
	char chunk[8192];
	ssize_t n;
	while ((n = sb_read_retry(fd, chunk, sizeof chunk)) > 0 && b.len < 1024 * 1024)
		sb_buf_append(&b, chunk, (size_t)n);
	if (n < 0 || !b.data) {
		sb_buf_free(&b);
		return sb_fail_errno(err, "cannot read %s", path), NULL;
	}
	return b.data;
}

int sb_http_tls_load(const struct sb_http_options *o, char **cert, char **key, struct sb_error *err)
{
	*cert = *key = NULL;
	if (!(*cert = read_file(o->tls_cert, err)) || !(*key = read_file(o->tls_key, err)))
		return -1;
	return 0;
}
