/* The `network` setting: the allow-list's syntax, its errors
 * naming the bad entry, and what it allows; the list and the refusals on
 * the control socket between sagebox and its proxy; the line a result
 * gets from a refusal. */
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "config/config.h"
#include "config/netlist.h"
#include "net/proxy_control.h"
#include "tools/result_text.h"
#include "tools/run.h"
#include "tools/tool.h"

static bool allows(const char *list, const char *host, unsigned port)
{
	struct sb_netlist l;
	char bad[128], h[SB_NET_HOST_MAX];
	const char *why;
	bool ip;
	if (sb_netlist_parse(list, &l, bad, sizeof bad, &why) ||
	    sb_net_host_normalise(host, strlen(host), h, sizeof h, &ip))
		return false;
	return sb_netlist_allows(&l, h, port);
}

static const char *rejects(const char *list, const char *want_entry)
{
	static struct sb_netlist l;
	char bad[128] = "";
	const char *why = NULL;
	if (!sb_netlist_parse(list, &l, bad, sizeof bad, &why))
		return NULL;
	CHECK(!strcmp(bad, want_entry));
	if (strcmp(bad, want_entry))
		fprintf(stderr, "  entry named: '%s', expected '%s'\n", bad, want_entry);
	return why;
}

int main(void)
{
	struct sb_config cfg;
	struct sb_error err = {0};
	sb_config_defaults(&cfg);
	CHECK(!strcmp(cfg.network, "none") && cfg.net.n == 0);

	/* The setting: normalised, and an error naming the bad entry. */
	CHECK(sb_config_set(&cfg, "network", " PyPI.org , *.Example.COM:8080,10.0.0.1, [::1]:443 ", "--network",
			    &err) == 0);
	CHECK(cfg.net.n == 4);
	CHECK(!strcmp(cfg.network, "pypi.org, *.example.com:8080, 10.0.0.1, [::1]:443"));
	CHECK(sb_config_set(&cfg, "network", "pypi.org, exa mple.org", "SAGEBOX_NETWORK", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "SAGEBOX_NETWORK");
	CHECK_STR_CONTAINS(err.msg, "'exa mple.org'");
	CHECK_STR_CONTAINS(err.hint, "HOST:PORT");
	CHECK(cfg.net.n == 4); /* a bad value leaves the list as it was */
	CHECK(sb_config_set(&cfg, "network", "none", "x", &err) == 0 && cfg.net.n == 0);
	CHECK(!strcmp(cfg.network, "none"));
	CHECK(sb_config_set(&cfg, "network", "", "x", &err) == 0 && cfg.net.n == 0);

	CHECK_STR_CONTAINS(rejects("a.org,b.org:0", "b.org:0"), "port");
	CHECK_STR_CONTAINS(rejects("b.org:65536", "b.org:65536"), "port");
	CHECK_STR_CONTAINS(rejects("b.org:+80", "b.org:+80"), "port");
	CHECK_STR_CONTAINS(rejects("b.org:", "b.org:"), "port");
	CHECK_STR_CONTAINS(rejects("*.10.0.0.1", "*.10.0.0.1"), "domain name");
	CHECK_STR_CONTAINS(rejects("::1", "::1"), "brackets");
	CHECK_STR_CONTAINS(rejects("[::1", "[::1"), "']'");
	CHECK(rejects("-a.org", "-a.org"));
	CHECK(rejects("a-.org", "a-.org"));
	CHECK(rejects("a..org", "a..org"));
	CHECK(rejects("a.org.", "a.org."));
	CHECK(rejects("http://a.org", "http://a.org"));
	CHECK(rejects("a.org/path", "a.org/path"));
	CHECK(rejects("*", "*"));
	CHECK(rejects("*.*.a.org", "*.*.a.org"));
	CHECK(rejects("a_b.org", "a_b.org"));
	CHECK_STR_CONTAINS(rejects("a.org, none", "none"), "none");
	CHECK(rejects("1.2.3", "1.2.3")); /* digits only: neither a name nor an address */
	char many[1024] = "";
	for (int i = 0; i < 33; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "h%d.org,", i);
	CHECK_STR_CONTAINS(rejects(many, "h32.org"), "32");

	/* Matching: names, ports, wildcards. */
	CHECK(allows("pypi.org", "pypi.org", 443));
	CHECK(allows("pypi.org", "PYPI.ORG", 80));
	CHECK(!allows("pypi.org", "pypi.org", 8080));
	CHECK(!allows("pypi.org", "pypi.org", 22));
	CHECK(allows("pypi.org:8080", "pypi.org", 8080));
	CHECK(!allows("pypi.org:8080", "pypi.org", 443));
	CHECK(!allows("pypi.org", "www.pypi.org", 443));
	CHECK(!allows("pypi.org", "pypi.org.evil.com", 443));
	CHECK(allows("*.oeis.org", "a.oeis.org", 443));
	CHECK(allows("*.oeis.org", "a.b.oeis.org", 443));
	CHECK(!allows("*.oeis.org", "oeis.org", 443));
	CHECK(!allows("*.oeis.org", "evil-oeis.org", 443));
	CHECK(!allows("*.oeis.org", "xoeis.org", 443));
	CHECK(allows("*.oeis.org, oeis.org", "oeis.org", 443));
	CHECK(!allows("none", "oeis.org", 443));
	/* Addresses only as listed, in one spelling. */
	CHECK(allows("10.0.0.1", "10.0.0.1", 80));
	CHECK(!allows("10.0.0.1", "10.0.0.2", 80));
	CHECK(allows("[::1]:443", "[0:0::1]", 443));
	CHECK(!allows("[::1]:443", "::1", 443)); /* an IPv6 host is bracketed */
	CHECK(!allows("pypi.org", "1.2.3.4", 443));

	/* What the model is told. */
	CHECK(sb_config_set(&cfg, "network", "oeis.org", "x", &err) == 0);
	char *ins = sb_tools_instructions(&cfg);
	CHECK_STR_CONTAINS(ins, "oeis.org");
	CHECK_STR_CONTAINS(ins, "403");
	free(ins);
	CHECK(sb_config_set(&cfg, "network", "none", "x", &err) == 0);
	ins = sb_tools_instructions(&cfg);
	CHECK_STR_CONTAINS(ins, "no network access");
	free(ins);

	/* A run's line on the network comes from what the proxy refused (the
	 * result's net_refused), never from the code's output. */
	const char *tb = "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>\n";
	CHECK(sb_config_set(&cfg, "network", "pypi.org", "x", &err) == 0);
	struct sb_result r = {0};
	r.exit_code = 1;
	r.err.data = (char *)tb;
	r.err.len = strlen(tb);
	r.max_bytes_per_stream = 1024;
	char *text = sb_result_text(&r, sb_tool_find("run_python"), &cfg);
	CHECK(text && !strstr(text, "[network]"));
	free(text);
	r.net_refused[0] = (struct sb_net_refusal){.sandbox = "the warm python worker, client -, a call",
						   .host = "oeis.org", .port = 443, .status = 403,
						   .why = "oeis.org:443 is not in the network allow-list"};
	r.n_net_refused = 1;
	r.net_refused_more = 2;
	text = sb_result_text(&r, sb_tool_find("run_python"), &cfg);
	CHECK_STR_CONTAINS(text, "\n[network] Only these hosts are reachable, through sagebox's proxy: pypi.org "
				 "(setting: network). The proxy refused oeis.org:443 (oeis.org:443 is not in the network "
				 "allow-list), and 2 more connections: retrying will not help.");
	free(text);
	json_t *o = sb_result_to_json(&r);
	json_t *x = json_array_get(json_object_get(o, "network_refused"), 0);
	CHECK(!strcmp(json_string_value(json_object_get(x, "host")), "oeis.org"));
	CHECK(json_integer_value(json_object_get(x, "status")) == 403);
	CHECK(json_integer_value(json_object_get(o, "network_refused_more")) == 2);
	json_decref(o);
	r.net_refused[0].status = 502;
	r.net_refused_more = 0;
	text = sb_result_text(&r, sb_tool_find("run_python"), &cfg);
	CHECK_STR_CONTAINS(text, "The proxy could not reach oeis.org:443");
	CHECK(!strstr(text, "retrying"));
	free(text);

	/* The list sagebox parsed reaches its proxy as it is, over a real
	 * SOCK_SEQPACKET pair; anything else first is refused. */
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0);
	struct sb_netlist sent, got;
	char bad[128];
	const char *why = NULL;
	CHECK(sb_netlist_parse("pypi.org, *.oeis.org:8080, [::1]:443", &sent, bad, sizeof bad, &why) == 0);
	CHECK(sb_proxy_list_send(sv[0], &sent) == 0);
	CHECK(sb_proxy_list_recv(sv[1], &got, &why) == 0);
	CHECK(got.n == 3 && sb_netlist_allows(&got, "a.oeis.org", 8080) && !sb_netlist_allows(&got, "oeis.org", 443));
	CHECK(send(sv[0], "add 1 x", 7, 0) == 7);
	CHECK(sb_proxy_list_recv(sv[1], &got, &why) == -1);
	CHECK_STR_CONTAINS(why, "not the allow-list");
	struct sb_netlist empty = {0};
	CHECK(sb_proxy_list_send(sv[0], &empty) == 0);
	CHECK(sb_proxy_list_recv(sv[1], &got, &why) == -1);

	/* A refusal report back: its fields as sent, a tab or newline in them
	 * (the host is what the code asked for) never splitting the record. */
	struct sb_net_refusal rep = {.sandbox = "the warm python worker, client c1, a call", .host = "evil\thost\n",
				     .port = 80, .status = 403, .why = "evil?host?:80 is not in the network allow-list"};
	sb_proxy_refusal_send(sv[1], 7, &rep);
	char msg[SB_PROXY_REPORT_MAX + 1];
	ssize_t n = recv(sv[0], msg, sizeof msg, 0);
	unsigned id = 0;
	struct sb_net_refusal back;
	CHECK(n > 0 && sb_proxy_refusal_parse(msg, (size_t)n, &id, &back) == 0);
	CHECK(id == 7 && back.port == 80 && back.status == 403);
	CHECK(!strcmp(back.host, "evil?host?") && !strcmp(back.sandbox, rep.sandbox) && !strcmp(back.why, rep.why));
	CHECK(sb_proxy_refusal_parse("refused 7 403", 13, &id, &back) == -1);
	CHECK(sb_proxy_refusal_parse("who 7 x", 7, &id, &back) == -1);
	/* A tally, on the same socket: told apart from a refusal, and a
	 * count no connection rate could reach is not taken. */
	uint64_t tally[3] = {1, 2, 0}, got_tally[3] = {0, 0, 0};
	CHECK(sb_proxy_tally_send(sv[1], tally) == 0);
	n = recv(sv[0], msg, sizeof msg, 0);
	CHECK(n > 0 && sb_proxy_refusal_parse(msg, (size_t)n, &id, &back) == -1);
	CHECK(sb_proxy_tally_parse(msg, (size_t)n, got_tally) == 0 && got_tally[0] == 1 && got_tally[1] == 2 &&
	      got_tally[2] == 0);
	CHECK(sb_proxy_tally_parse("tally 1 2 4294967296", 20, got_tally) == -1);
	uint64_t none[3] = {0, 0, 0};
	CHECK(sb_proxy_tally_send(sv[1], none) == -1 && sb_proxy_tally_send(-1, tally) == -1);
	close(sv[0]);
	close(sv[1]);

	/* A refusal without a request (over the cap, a broken head) names
	 * no host. */
	r.net_refused[0] = (struct sb_net_refusal){.status = 503, .why = "too many network connections at once"};
	text = sb_result_text(&r, sb_tool_find("run_python"), &cfg);
	CHECK_STR_CONTAINS(text, "The proxy did not serve a connection (too many network connections at once).");
	free(text);
	return check_summary();
}
