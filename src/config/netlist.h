/* The `network` setting: which hosts the code in a sandbox may reach
 * through sagebox's proxy. "none" (the default) is an empty
 * list: no proxy, nothing changes. Otherwise comma-separated entries:
 *   HOST        a DNS name or an IP literal ([v6] in brackets), ports 80 and 443
 *   HOST:PORT   that name on that port only
 *   *.DOMAIN    any subdomain of DOMAIN (not DOMAIN itself), ports 80 and 443;
 *               *.DOMAIN:PORT likewise on PORT
 * Pure data, no I/O. The config owns it: it parses the setting once, and
 * the proxy (net/) gets the parsed list and matches against it. */
#ifndef SAGEBOX_CONFIG_NETLIST_H
#define SAGEBOX_CONFIG_NETLIST_H

#include <stdbool.h>
#include <stddef.h>

#define SB_NET_ENTRIES_MAX 32
#define SB_NET_HOST_MAX 254 /* 253 characters of a DNS name, and the NUL */

struct sb_net_entry {
	char host[SB_NET_HOST_MAX]; /* lower case; for *.DOMAIN: DOMAIN; IPv6 without brackets */
	unsigned port;              /* 0: the web's ports, 80 and 443 */
	bool wildcard;              /* *.DOMAIN */
	bool ip;                    /* an IP literal */
};

struct sb_netlist {
	unsigned n; /* 0: no network */
	struct sb_net_entry e[SB_NET_ENTRIES_MAX];
};

/* Parse the setting's value into *out ("none" or "" is the empty list).
 * On a bad entry returns -1, copies the entry into bad (bad_size bytes) and
 * sets *why to what is wrong with it; *out is then unchanged. */
int sb_netlist_parse(const char *value, struct sb_netlist *out, char *bad, size_t bad_size, const char **why);

/* Normalise a requested host (from CONNECT or Host: a name, an IPv4
 * literal or a bracketed IPv6 literal) into out: lower case, IPv6 without
 * brackets. -1 if it is not a valid host. */
int sb_net_host_normalise(const char *host, size_t len, char *out, size_t out_size, bool *is_ip);

/* Is (host, port) on the list? host as normalised above. The proxy asks
 * twice: for the requested name, and, when that resolves to a loopback,
 * private or link-local address, for the address itself (net/dest.h). */
bool sb_netlist_allows(const struct sb_netlist *l, const char *host, unsigned port);

/* The list, for the model and for status: "pypi.org, *.oeis.org:8080"
 * (entries as given, normalised), or "none". */
void sb_netlist_format(const struct sb_netlist *l, char *out, size_t out_size);

/* What the model is told about the network, one or two sentences:
 * "There is no network access" or the hosts it may reach. */
void sb_netlist_model_text(const struct sb_netlist *l, char *out, size_t out_size);

#endif
