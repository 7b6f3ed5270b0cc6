/* Unit tests of the HTTP transport's options (transport/http_options.c):
 * the listen address, the rules that must hold before anything listens,
 * the socket address and URL made from them, the header timeout and the
 * TLS files. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "transport/http_options.h"

static void test_defaults(void)
{
	struct sb_http_options o;
	sb_http_options_defaults(&o);
	CHECK(!strcmp(o.bind.addr, "127.0.0.1") && o.bind.loopback && !o.bind.wildcard && o.bind.port == 0);
	CHECK(o.limits.max_body == SB_HTTP_MAX_BODY && o.max_connections == SB_HTTP_MAX_CONNECTIONS);
	CHECK(o.request_timeout_s == SB_HTTP_REQUEST_TIMEOUT_S && o.idle_timeout_s == SB_HTTP_IDLE_TIMEOUT_S);
	CHECK(!o.no_auth && !o.allow_remote && !o.tls_cert && !o.tls_key && !o.token_file);
	/* The headers' time is the shorter of the two timeouts. */
	CHECK(sb_http_header_timeout(&o) == SB_HTTP_HEADER_TIMEOUT_S);
	o.request_timeout_s = 3;
	CHECK(sb_http_header_timeout(&o) == 3);
}

static void test_listen(void)
{
	struct sb_http_options o;
	struct sb_error err = {0};
	sb_http_options_defaults(&o);
	CHECK(sb_http_parse_listen("8080", &o, &err) == 0 && o.bind.port == 8080 && o.bind.loopback);
	CHECK(!strcmp(o.bind.addr, "127.0.0.1"));
	CHECK(sb_http_parse_listen("[::1]:0", &o, &err) == 0 && o.bind.loopback && !strcmp(o.bind.addr, "::1"));
	CHECK(sb_http_parse_listen("0.0.0.0:80", &o, &err) == 0 && o.bind.wildcard && !o.bind.loopback);
	CHECK(sb_http_parse_listen("[::]:80", &o, &err) == 0 && o.bind.wildcard && !o.bind.loopback);
	CHECK(sb_http_parse_listen("localhost:1", &o, &err) == 0 && o.bind.loopback && !strcmp(o.bind.addr, "127.0.0.1"));
	CHECK(sb_http_parse_listen("127.1.2.3:9", &o, &err) == 0 && o.bind.loopback && o.bind.port == 9);
	CHECK(sb_http_parse_listen("192.0.2.7:65535", &o, &err) == 0 && !o.bind.loopback && !o.bind.wildcard);
	CHECK(o.bind.port == 65535);
	/* Refusals name the problem and, for the port, an example. */
	CHECK(sb_http_parse_listen("65536", &o, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "the port must be a number from 0 to 65535");
	CHECK_STR_CONTAINS(err.hint, "--http 8080");
	CHECK(sb_http_parse_listen("80x", &o, &err) < 0 && sb_http_parse_listen("1:", &o, &err) < 0);
	CHECK(sb_http_parse_listen("", &o, &err) < 0);
	CHECK(sb_http_parse_listen("example.org:80", &o, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "'example.org' is not an IP address");
	CHECK(sb_http_parse_listen(":80", &o, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "the address is empty or too long");
}

static void test_check(void)
{
	struct sb_http_options o;
	struct sb_error err = {0};
	sb_http_options_defaults(&o);
	CHECK(sb_http_check_options(&o, &err) == 0);
	o.tls_cert = "cert.pem";
	CHECK(sb_http_check_options(&o, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "--tls-cert and --tls-key go together");
	o.tls_cert = NULL;
	/* Beyond this machine only when asked, and never without a token. */
	CHECK(sb_http_parse_listen("0.0.0.0:8080", &o, &err) == 0);
	CHECK(sb_http_check_options(&o, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "0.0.0.0 is not a loopback address");
	CHECK_STR_CONTAINS(err.hint, "--allow-remote");
	o.allow_remote = true;
	CHECK(sb_http_check_options(&o, &err) == 0);
	o.no_auth = true;
	CHECK(sb_http_check_options(&o, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "--insecure-no-auth is allowed only on a loopback address");
	CHECK(sb_http_parse_listen("[::1]:8080", &o, &err) == 0);
	CHECK(sb_http_check_options(&o, &err) == 0);
	o.token_file = "tokens";
	CHECK(sb_http_check_options(&o, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "contradict");
}

static void test_address(void)
{
	struct sb_http_options o;
	struct sb_error err = {0};
	struct sockaddr_storage ss;
	char url[160];
	sb_http_options_defaults(&o);
	CHECK(sb_http_parse_listen("127.0.0.1:8080", &o, &err) == 0);
	CHECK(sb_http_sockaddr(&o.bind, &ss) == sizeof(struct sockaddr_in) && ss.ss_family == AF_INET);
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&ss;
	CHECK(ntohs(a4->sin_port) == 8080 && ntohl(a4->sin_addr.s_addr) == INADDR_LOOPBACK);
	sb_http_url_format(&o.bind, 8080, false, url, sizeof url);
	CHECK(!strcmp(url, "http://127.0.0.1:8080/mcp"));
	CHECK(sb_http_parse_listen("[::1]:0", &o, &err) == 0);
	CHECK(sb_http_sockaddr(&o.bind, &ss) == sizeof(struct sockaddr_in6) && ss.ss_family == AF_INET6);
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&ss;
	CHECK(ntohs(a6->sin6_port) == 0 && IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr));
	/* Port 0: the URL has the port the system chose. */
	sb_http_url_format(&o.bind, 41234, true, url, sizeof url);
	CHECK(!strcmp(url, "https://[::1]:41234/mcp"));
}

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/sagebox-unit-tls-XXXXXX");
	int fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_tls_files(void)
{
	struct sb_http_options o;
	struct sb_error err = {0};
	sb_http_options_defaults(&o);
	char *cert_path = write_tmp("-----BEGIN CERTIFICATE-----\n");
	char *key_path = write_tmp("-----BEGIN PRIVATE KEY-----\n");
	char *cert, *key;
	o.tls_cert = cert_path;
	o.tls_key = key_path;
	CHECK(sb_http_tls_load(&o, &cert, &key, &err) == 0);
	CHECK(cert && key && !strcmp(cert, "-----BEGIN CERTIFICATE-----\n") && !strcmp(key, "-----BEGIN PRIVATE KEY-----\n"));
	free(cert);
	free(key);
	/* A file that is not there is named. */
	o.tls_key = "/nonexistent/key.pem";
	CHECK(sb_http_tls_load(&o, &cert, &key, &err) < 0 && !key);
	CHECK_STR_CONTAINS(err.msg, "cannot open /nonexistent/key.pem");
	free(cert);
	unlink(cert_path);
	unlink(key_path);
	free(cert_path);
	free(key_path);
}

int main(void)
{
	test_defaults();
	test_listen();
	test_check();
	test_address();
	test_tls_files();
	return check_summary();
}
