/* The proxy's request heads: what http-parser gives us, and the
 * rules on top of it (CONNECT/Host agreement, absolute form, the head sent on). */
#include "check.h"
#include "net/request.h"

static int parse(const char *s, struct sb_proxy_req *r, const char **why)
{
	return sb_proxy_req_parse(s, strlen(s), r, why);
}

/* How many bytes after the head of `s` the body framing takes, fed in
 * pieces of `piece` bytes; *done whether the message ended. */
static ssize_t body_of(const char *s, size_t piece, bool *done)
{
	struct sb_proxy_req r;
	const char *why;
	if (parse(s, &r, &why) != 0)
		return -2;
	struct sb_proxy_body b;
	sb_proxy_body_start(&b, s, r.head_len);
	const char *rest = s + r.head_len;
	size_t n = strlen(rest), taken = 0;
	for (size_t at = 0; at < n; at += piece) {
		size_t len = n - at < piece ? n - at : piece;
		ssize_t t = sb_proxy_body_take(&b, rest + at, len, &why);
		if (t < 0) {
			sb_proxy_req_free(&r);
			return -1;
		}
		taken += (size_t)t;
	}
	sb_proxy_req_free(&r);
	*done = b.done;
	return (ssize_t)taken;
}

static void body_checks(void)
{
	bool done;
	static const size_t pieces[] = {1, 3, 1000};
	for (size_t i = 0; i < 3; i++) {
		size_t p = pieces[i];
		/* no body: done at the head; the next request is not taken */
		CHECK(body_of("GET http://a.org/ HTTP/1.1\r\n\r\nGET http://b.org/ HTTP/1.1\r\n\r\n", p, &done) == 0 && done);
		/* Content-Length: the body and no more */
		CHECK(body_of("POST http://a.org/ HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /x HTTP/1.1\r\n\r\n", p,
			      &done) == 5 &&
		      done);
		CHECK(body_of("POST http://a.org/ HTTP/1.1\r\nContent-Length: 9\r\n\r\nhello", p, &done) == 5 && !done);
		/* chunked: up to the end of the trailer section */
		const char *ch = "POST http://a.org/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
				 "5\r\nhello\r\n0\r\nX-T: 1\r\n\r\nGET http://b.org/ HTTP/1.1\r\n\r\n";
		CHECK(body_of(ch, p, &done) == (ssize_t)strlen("5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n") && done);
		/* broken framing */
		CHECK(body_of("POST http://a.org/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", p, &done) == -1);
	}
	/* both lengths: refused with the head (request smuggling) */
	struct sb_proxy_req r;
	const char *why;
	CHECK(parse("POST http://a.org/ HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", &r,
		    &why) == -1);
}

int main(void)
{
	struct sb_proxy_req r;
	const char *why;

	const char *c = "CONNECT Files.PythonHosted.org:443 HTTP/1.1\r\nHost: files.pythonhosted.org:443\r\n\r\nTLS";
	CHECK(parse(c, &r, &why) == 0 && r.connect && r.port == 443);
	CHECK(!strcmp(r.host, "files.pythonhosted.org") && !r.host_is_ip);
	CHECK(r.head_len == strlen(c) - 3); /* the tunnel's first bytes stay for the tunnel */
	CHECK(!r.upstream);

	const char *g = "GET http://oeis.org/search?q=1,2,3&fmt=json HTTP/1.1\r\nHost: oeis.org\r\n"
			"Proxy-Connection: keep-alive\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\nBODY";
	CHECK(parse(g, &r, &why) == 0 && !r.connect && r.port == 80 && !strcmp(r.host, "oeis.org"));
	CHECK(r.head_len == strlen(g) - 4);
	CHECK(r.upstream && !strcmp(r.upstream, "GET /search?q=1,2,3&fmt=json HTTP/1.1\r\nHost: oeis.org\r\n"
					     "Accept: */*\r\nConnection: close\r\n\r\n"));
	sb_proxy_req_free(&r);

	CHECK(parse("GET http://[::1]:8080 HTTP/1.0\r\n\r\n", &r, &why) == 0 && r.host_is_ip && r.port == 8080);
	CHECK(!strcmp(r.host, "::1"));
	CHECK(r.upstream && !strcmp(r.upstream, "GET / HTTP/1.0\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n"));
	sb_proxy_req_free(&r);

	/* Incomplete: read more; a head that never ends: refused. */
	CHECK(parse("GET http://a.org/ HTTP/1.1\r\nHost: a.or", &r, &why) == 1);
	static char big[SB_PROXY_HEAD_MAX + 100];
	memset(big, 'a', sizeof big - 1);
	memcpy(big, "GET http://a.org/ HTTP/1.1\r\nX: ", 31);
	CHECK(parse(big, &r, &why) == -1 && why);

	/* CONNECT and Host must name the same place. */
	CHECK(parse("CONNECT a.org:443 HTTP/1.1\r\nHost: b.org:443\r\n\r\n", &r, &why) == -1);
	CHECK_STR_CONTAINS(why, "disagree");
	CHECK(parse("CONNECT a.org:443 HTTP/1.1\r\nHost: a.org:8443\r\n\r\n", &r, &why) == -1);
	CHECK(parse("GET http://a.org/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n", &r, &why) == -1);
	CHECK_STR_CONTAINS(why, "disagree");
	CHECK(parse("GET http://a.org/ HTTP/1.1\r\nHost: a.org\r\nHost: b.org\r\n\r\n", &r, &why) == -1);
	CHECK(parse("CONNECT a.org:443 HTTP/1.1\r\nHost: a.org\r\n\r\n", &r, &why) == 0); /* port from CONNECT */

	/* What is refused outright. */
	CHECK(parse("CONNECT a.org HTTP/1.1\r\n\r\n", &r, &why) == -1);
	CHECK(parse("GET /local HTTP/1.1\r\nHost: a.org\r\n\r\n", &r, &why) == -1);
	CHECK_STR_CONTAINS(why, "http://");
	CHECK(parse("GET https://a.org/ HTTP/1.1\r\n\r\n", &r, &why) == -1);
	CHECK(parse("GET ftp://a.org/ HTTP/1.1\r\n\r\n", &r, &why) == -1);
	CHECK(parse("GET http://u:p@a.org/ HTTP/1.1\r\n\r\n", &r, &why) == -1);
	CHECK(parse("GET http://a.org:0/ HTTP/1.1\r\n\r\n", &r, &why) == -1);
	CHECK(parse("GET http://a.org:99999/ HTTP/1.1\r\n\r\n", &r, &why) == -1);
	CHECK(parse("GET http://a_b.org/ HTTP/1.1\r\n\r\n", &r, &why) == -1);
	CHECK(parse("GET http://a.org/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", &r, &why) == -1);
	CHECK(parse("GET http://a.org/ HTTP/1.1\r\nX: a\rb\r\n\r\n", &r, &why) == -1);
	static const char nul[] = "GET http://a.org/ HTTP/1.1\r\nX:\0" "3\r\n\r\n"; /* found by fuzz_proxy */
	CHECK(sb_proxy_req_parse(nul, sizeof nul - 1, &r, &why) == -1);
	CHECK_STR_CONTAINS(why, "control");
	CHECK(parse("SSH-2.0-OpenSSH\r\n\r\n", &r, &why) == -1);
	CHECK_STR_CONTAINS(why, "HTTP");
	/* A header name is a token: "Host : x" is not a Host header and is
	 * refused (RFC 9112 5.1), not sent on beside the Host we add. */
	CHECK(parse("GET http://a.org/ HTTP/1.1\r\nHost : evil.test\r\n\r\n", &r, &why) == -1);
	CHECK_STR_CONTAINS(why, "header name");
	CHECK(parse("GET http://a.org/ HTTP/1.1\r\nX Y: 1\r\n\r\n", &r, &why) == -1);
	CHECK(parse("GET http://a.org/ HTTP/1.1\r\nX-Y!#$%&'*+.^_`|~: 1\r\n\r\n", &r, &why) == 0);
	sb_proxy_req_free(&r);
	body_checks();
	return check_summary();
}
