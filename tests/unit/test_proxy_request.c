/* The proxy's request heads: what http-parser gives us, and the
 * rules on top of it (CONNECT/Host agreement, absolute form, the head sent on). */
#include "check.h"
#include "net/request.h"

static int parse(const char *s, struct sb_proxy_req *r, const char **why)
{
	return sb_proxy_req_parse(s, strlen(s), r, why);
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
	return check_summary();
}
