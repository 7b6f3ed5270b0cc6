#include "net/dest.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

/* One table: the special ranges, IPv4 written as IPv4-mapped IPv6 so one
 * prefix match serves both families. */
static const struct range {
	const char *prefix; /* IPv6 text */
	unsigned bits;
	const char *what;
} ranges[] = {
	{"::ffff:0.0.0.0", 104, "an unspecified address"},
	{"::ffff:10.0.0.0", 104, "a private address"},
	{"::ffff:100.64.0.0", 106, "a shared (carrier-grade NAT) address"},
	{"::ffff:127.0.0.0", 104, "a loopback address"},
	{"::ffff:169.254.0.0", 112, "a link-local address (cloud metadata lives here)"},
	{"::ffff:172.16.0.0", 108, "a private address"},
	{"::ffff:192.0.0.0", 120, "a reserved address"},
	{"::ffff:192.168.0.0", 112, "a private address"},
	{"::ffff:198.18.0.0", 111, "a reserved address"},
	{"::ffff:224.0.0.0", 100, "a multicast address"},
	{"::ffff:240.0.0.0", 100, "a reserved or broadcast address"},
	{"::", 128, "an unspecified address"},
	{"::1", 128, "a loopback address"},
	{"fc00::", 7, "a private address"},
	{"fe80::", 10, "a link-local address"},
	{"fec0::", 10, "a site-local address"},
	{"ff00::", 8, "a multicast address"},
};

static bool in_prefix(const unsigned char a[16], const char *prefix, unsigned bits)
{
	unsigned char p[16];
	if (inet_pton(AF_INET6, prefix, p) != 1)
		return false;
	for (unsigned i = 0; i < bits; i++)
		if (((a[i / 8] ^ p[i / 8]) >> (7 - i % 8)) & 1)
			return false;
	return true;
}

/* Any address as 16 bytes, IPv4 mapped. Addresses that carry an IPv4
 * address (NAT64 64:ff9b::/96, IPv4-compatible ::/96) are judged by it. */
static bool as_v6(const struct sockaddr *sa, unsigned char a[16])
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (sa->sa_family == AF_INET) {
		memcpy(a, mapped, 12);
		memcpy(a + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		return true;
	}
	if (sa->sa_family != AF_INET6)
		return false;
	memcpy(a, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
	if (in_prefix(a, "64:ff9b::", 96) || (in_prefix(a, "::", 96) && !in_prefix(a, "::", 127)))
		memcpy(a, mapped, 12);
	return true;
}

static bool own_address(const unsigned char a[16])
{
	struct ifaddrs *list, *i;
	bool own = false;
	if (getifaddrs(&list))
		return true; /* cannot tell: treat as ours */
	for (i = list; i && !own; i = i->ifa_next) {
		unsigned char b[16];
		if (i->ifa_addr && as_v6(i->ifa_addr, b))
			own = !memcmp(a, b, 16);
	}
	freeifaddrs(list);
	return own;
}

const char *sb_net_addr_class(const struct sockaddr *sa)
{
	unsigned char a[16];
	if (!as_v6(sa, a))
		return "not an internet address";
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
		if (in_prefix(a, ranges[i].prefix, ranges[i].bits))
			return ranges[i].what;
	return own_address(a) ? "an address of this machine" : NULL;
}

void sb_net_addr_text(const struct sockaddr *sa, char *out, size_t size)
{
	const void *a = sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr
						  : (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	if (!inet_ntop(sa->sa_family, a, out, (socklen_t)size))
		snprintf(out, size, "?");
}
