/* Fuzz target: the network proxy's request heads (net/request.c, on
 * Debian's http-parser), the first code that reads a sandbox's bytes on
 * their way out, and the allow-list match after it.
 *
 * Input: the bytes a sandbox sends the proxy. Every accepted head is
 * checked: it took no more than the input, its host is normalised (doing it
 * again changes nothing) and its port is a port; a plain request's head to
 * send on is well formed (every line ends in CRLF, no bare CR or LF, one
 * blank line at its end only, every header name a token), so nothing the
 * sandbox wrote can smuggle a second request or header past the check. The
 * bytes after a plain request's head go through the body framing
 * (sb_proxy_body_take) in pieces of the sizes the input's first byte
 * picks: it takes no more than it is given, and once the message is done
 * it takes nothing, so a pipelined request never goes on. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/netlist.h"
#include "net/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void body(const uint8_t *rest, size_t n, const char *head, size_t head_len, uint8_t pick)
{
	static const size_t pieces[] = {1, 7, 64, 4096, 1u << 20};
	size_t piece = pieces[pick % (sizeof pieces / sizeof pieces[0])];
	struct sb_proxy_body b;
	sb_proxy_body_start(&b, head, head_len);
	for (size_t at = 0; at < n;) {
		size_t len = n - at < piece ? n - at : piece;
		bool was_done = b.done;
		const char *why;
		ssize_t took = sb_proxy_body_take(&b, (const char *)rest + at, len, &why);
		if (took < 0) {
			if (!why || !*why || strchr(why, '\n'))
				abort();
			return;
		}
		if ((size_t)took > len || (was_done && took) || ((size_t)took < len && !b.done))
			abort();
		at += len;
		if (b.done && (size_t)took < len)
			return; /* the rest is another request: never relayed */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sb_netlist list;
	static int ready;
	if (!ready) {
		char bad[64];
		const char *why;
		if (sb_netlist_parse("pypi.org, *.oeis.org:8080, 10.0.0.1, [::1]:443", &list, bad, sizeof bad, &why))
			abort();
		ready = 1;
	}
	struct sb_proxy_req r;
	const char *why;
	int rc = sb_proxy_req_parse((const char *)data, size, &r, &why);
	if (rc < 0 && (!why || !*why || strchr(why, '\n')))
		abort();
	if (rc != 0)
		return 0;
	if (r.head_len > size || r.head_len == 0 || r.port < 1 || r.port > 65535)
		abort();
	char again[SB_NET_HOST_MAX];
	bool ip;
	size_t hl = strlen(r.host);
	if (strchr(r.host, ':')) { /* IPv6: normalise takes it bracketed */
		char b[SB_NET_HOST_MAX + 2];
		b[0] = '[';
		memcpy(b + 1, r.host, hl);
		b[hl + 1] = ']';
		if (sb_net_host_normalise(b, hl + 2, again, sizeof again, &ip) || strcmp(again, r.host))
			abort();
	} else if (sb_net_host_normalise(r.host, hl, again, sizeof again, &ip) || strcmp(again, r.host) ||
		   ip != r.host_is_ip) {
		abort();
	}
	(void)sb_netlist_allows(&list, r.host, r.port);
	if (!r.connect) {
		const char *u = r.upstream;
		size_t n = r.upstream_len;
		if (!u || n < 4 || memcmp(u + n - 4, "\r\n\r\n", 4) || strlen(u) != n)
			abort();
		for (size_t i = 0; i < n; i++) {
			if (u[i] == '\r' && (i + 1 == n || u[i + 1] != '\n'))
				abort();
			if (u[i] == '\n' && (i == 0 || u[i - 1] != '\r'))
				abort();
			if (u[i] == '\n' && i + 2 < n && u[i + 1] == '\r' && i + 3 != n)
				abort(); /* a blank line before the end: a second head */
		}
		/* after the request line, each line's name is a token up to its colon */
		for (const char *l = memchr(u, '\n', n) + 1; l < u + n - 2; l = memchr(l, '\n', (size_t)(u + n - l)) + 1) {
			const char *colon = memchr(l, ':', (size_t)(u + n - l));
			if (!colon || colon == l)
				abort();
			for (const char *k = l; k < colon; k++)
				if (*k <= ' ' || *k == 0x7f || strchr("\"(),/:;<=>?@[\\]{}", *k))
					abort();
		}
		body(data + r.head_len, size - r.head_len, (const char *)data, r.head_len, size ? data[0] : 0);
	} else if (r.upstream) {
		abort();
	}
	sb_proxy_req_free(&r);
	return 0;
}
