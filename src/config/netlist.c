#include "config/netlist.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A DNS name: labels of letters, digits and '-' (not at either end), 1-63
 * characters each, 253 in all, at least one letter somewhere so that a
 * dotted number is never taken for a name. */
static bool valid_name(const char *s)
{
	size_t n = strlen(s), label = 0;
	bool alpha = false;
	if (!n || n > 253)
		return false;
	for (size_t i = 0; i <= n; i++) {
		char c = s[i];
		if (c == '.' || !c) {
			if (!label || s[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!(isalnum((unsigned char)c) || c == '-') || (c == '-' && !label) || ++label > 63)
			return false;
		alpha |= isalpha((unsigned char)c) != 0;
	}
	return alpha;
}

int sb_net_host_normalise(const char *host, size_t len, char *out, size_t out_size, bool *is_ip)
{
	char h[SB_NET_HOST_MAX + 2];
	unsigned char addr[16];
	if (!len || len >= sizeof h || out_size < SB_NET_HOST_MAX)
		return -1;
	memcpy(h, host, len);
	h[len] = '\0';
	if (memchr(h, '\0', len))
		return -1;
	for (size_t i = 0; i < len; i++)
		h[i] = (char)tolower((unsigned char)h[i]);
	if (h[0] == '[') {
		if (h[len - 1] != ']')
			return -1;
		h[len - 1] = '\0';
		if (inet_pton(AF_INET6, h + 1, addr) != 1)
			return -1;
		/* One spelling per address, so "[::FFFF:1]" and "[::ffff:0.0.1]" match alike. */
		inet_ntop(AF_INET6, addr, out, (socklen_t)out_size);
		*is_ip = true;
		return 0;
	}
	if (inet_pton(AF_INET, h, addr) == 1) {
		inet_ntop(AF_INET, addr, out, (socklen_t)out_size);
		*is_ip = true;
		return 0;
	}
	if (!valid_name(h))
		return -1;
	snprintf(out, out_size, "%s", h);
	*is_ip = false;
	return 0;
}

/* One entry: [*.]HOST[:PORT], HOST a name, an IPv4 literal or [IPv6]. */
static const char *parse_entry(char *s, struct sb_net_entry *e)
{
	memset(e, 0, sizeof *e);
	if (!strncmp(s, "*.", 2)) {
		e->wildcard = true;
		s += 2;
	}
	char *port = NULL;
	char *close = s[0] == '[' ? strchr(s, ']') : NULL;
	if (s[0] == '[' && !close)
		return "an IPv6 address needs its closing ']'";
	char *colon = strrchr(close ? close : s, ':');
	if (colon) {
		if (!close && strchr(s, ':') != colon)
			return "an IPv6 address is written in brackets, e.g. [2001:db8::1]:443";
		*colon = '\0';
		port = colon + 1;
	} else if (close && close[1]) {
		return "unexpected text after ']'";
	}
	if (port) {
		char *end;
		long p = (*port >= '0' && *port <= '9') ? strtol(port, &end, 10) : -1;
		if (p < 1 || p > 65535 || *end)
			return "the port must be a number from 1 to 65535";
		e->port = (unsigned)p;
	}
	if (sb_net_host_normalise(s, strlen(s), e->host, sizeof e->host, &e->ip))
		return "not a host name, IPv4 address or [IPv6] address";
	if (e->wildcard && e->ip)
		return "*. takes a domain name, not an address";
	return NULL;
}

int sb_netlist_parse(const char *value, struct sb_netlist *out, char *bad, size_t bad_size, const char **why)
{
	struct sb_netlist l;
	char buf[4096];
	memset(&l, 0, sizeof l);
	while (isspace((unsigned char)*value))
		value++;
	if (!*value || !strcasecmp(value, "none")) {
		*out = l;
		return 0;
	}
	if (strlen(value) >= sizeof buf) {
		snprintf(bad, bad_size, "%.40s...", value);
		*why = "the list is too long";
		return -1;
	}
	snprintf(buf, sizeof buf, "%s", value);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*t))
			t++;
		for (char *end = t + strlen(t); end > t && isspace((unsigned char)end[-1]);)
			*--end = '\0';
		snprintf(bad, bad_size, "%s", t);
		if (!*t)
			continue;
		if (!strcasecmp(t, "none")) {
			*why = "'none' cannot be combined with hosts";
			return -1;
		}
		if (l.n == SB_NET_ENTRIES_MAX) {
			*why = "more than 32 entries";
			return -1;
		}
		if ((*why = parse_entry(t, &l.e[l.n])))
			return -1;
		l.n++;
	}
	*out = l;
	return 0;
}

static bool port_ok(const struct sb_net_entry *e, unsigned port)
{
	return e->port ? e->port == port : (port == 80 || port == 443);
}

bool sb_netlist_allows(const struct sb_netlist *l, const char *host, unsigned port)
{
	size_t hn = strlen(host);
	for (unsigned i = 0; i < l->n; i++) {
		const struct sb_net_entry *e = &l->e[i];
		if (!port_ok(e, port))
			continue;
		if (!e->wildcard && !strcmp(e->host, host))
			return true;
		size_t dn = strlen(e->host);
		/* *.oeis.org: "a.oeis.org" yes; "oeis.org" and "evil-oeis.org" no. */
		if (e->wildcard && hn > dn + 1 && host[hn - dn - 1] == '.' && !strcmp(host + hn - dn, e->host))
			return true;
	}
	return false;
}

void sb_netlist_format(const struct sb_netlist *l, char *out, size_t out_size)
{
	size_t at = 0;
	if (out_size)
		out[0] = '\0';
	if (!l->n) {
		snprintf(out, out_size, "none");
		return;
	}
	for (unsigned i = 0; i < l->n && at < out_size; i++) {
		const struct sb_net_entry *e = &l->e[i];
		bool v6 = e->ip && strchr(e->host, ':');
		char port[16] = "";
		if (e->port)
			snprintf(port, sizeof port, ":%u", e->port);
		int w = snprintf(out + at, out_size - at, "%s%s%s%s%s%s", i ? ", " : "", e->wildcard ? "*." : "",
				 v6 ? "[" : "", e->host, v6 ? "]" : "", port);
		if (w < 0)
			break;
		at += (size_t)w;
	}
}

void sb_netlist_model_text(const struct sb_netlist *l, char *out, size_t out_size)
{
	char hosts[1024];
	if (!l->n) {
		snprintf(out, out_size, "There is no network access (no pip install, no downloads)");
		return;
	}
	sb_netlist_format(l, hosts, sizeof hosts);
	snprintf(out, out_size,
		 "The network is reachable only through sagebox's HTTP proxy (pip, urllib, requests, curl and "
		 "git use it by themselves), and only these hosts, as the user set them: %s (a host without a "
		 "port: ports 80 and 443). Any other host is refused with 403; do not retry it. With the package "
		 "index listed, `pip install NAME` (or %%pip install) in a session installs into /work/.local, "
		 "importable at once and gone with the session",
		 hosts);
}
