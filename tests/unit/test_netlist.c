/* The `network` setting: the allow-list's syntax, its errors
 * naming the bad entry, and what it allows. */
#include <stdlib.h>

#include "check.h"
#include "config/config.h"
#include "net/allowlist.h"
#include "net/note.h"
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

	/* A run whose error shows a failed lookup gets one line on the setting. */
	char nb[1280];
	const char *tb = "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>\n";
	struct sb_netlist none = {0};
	CHECK_STR_CONTAINS(sb_net_failure_note(tb, strlen(tb), &none, nb, sizeof nb), "setting `network`");
	CHECK(!sb_net_failure_note("ZeroDivisionError\n", 18, &none, nb, sizeof nb));
	CHECK(sb_config_set(&cfg, "network", "pypi.org", "x", &err) == 0);
	const char *curl = "curl: (56) CONNECT tunnel failed, response 403\nsagebox: oeis.org:443 is not in the network allow-list";
	CHECK_STR_CONTAINS(sb_net_failure_note(curl, strlen(curl), &cfg.net, nb, sizeof nb), "pypi.org");
	const char *pip = "WARNING: Retrying (Retry(total=1)) after connection broken by 'ProxyError('Cannot connect "
			  "to proxy.', OSError('Tunnel connection failed: 403 Forbidden'))': /simple/x/";
	CHECK_STR_CONTAINS(sb_net_failure_note(pip, strlen(pip), &cfg.net, nb, sizeof nb), "retrying will not help");
	CHECK(sb_config_set(&cfg, "network", "none", "x", &err) == 0);
	struct sb_result r = {0};
	r.exit_code = 1;
	r.err.data = (char *)tb;
	r.err.len = strlen(tb);
	r.max_bytes_per_stream = 1024;
	char *text = sb_result_text(&r, sb_tool_find("run_python"), &cfg);
	CHECK_STR_CONTAINS(text, "\n[network] This sandbox has no network");
	free(text);
	r.err.data = (char *)"NameError: x\n";
	r.err.len = strlen(r.err.data);
	text = sb_result_text(&r, sb_tool_find("run_python"), &cfg);
	CHECK(text && !strstr(text, "[network]"));
	free(text);
	return check_summary();
}
