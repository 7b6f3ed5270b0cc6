/* The control socket's messages (proxy_control.h). */
#include "net/proxy_control.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* Ahead of the list, so that nothing else is taken for one. */
static const char LIST_TAG[8] = "netlist";
/* "refused ID STATUS PORT\tHOST\tSANDBOX\tWHY" */
#define REFUSED "refused"
#define TALLY "tally %llu %llu %llu"

struct list_msg {
	char tag[sizeof LIST_TAG];
	struct sb_netlist list;
};

int sb_proxy_list_send(int control_fd, const struct sb_netlist *l)
{
	struct list_msg m;
	memset(&m, 0, sizeof m);
	memcpy(m.tag, LIST_TAG, sizeof LIST_TAG);
	m.list = *l;
	return send(control_fd, &m, sizeof m, MSG_NOSIGNAL) == (ssize_t)sizeof m ? 0 : -1;
}

int sb_proxy_list_recv(int control_fd, struct sb_netlist *l, const char **why)
{
	/* One byte more than a list: a longer message is cut, and refused. */
	struct {
		struct list_msg m;
		char more;
	} in;
	ssize_t n;
	do
		n = recv(control_fd, &in, sizeof in, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		*why = n ? strerror(errno) : "sagebox hung up before it sent the allow-list";
		return -1;
	}
	if ((size_t)n != sizeof in.m || memcmp(in.m.tag, LIST_TAG, sizeof LIST_TAG)) {
		*why = "the first control message is not the allow-list";
		return -1;
	}
	const struct sb_netlist *got = &in.m.list;
	if (!got->n || got->n > SB_NET_ENTRIES_MAX) {
		*why = "the allow-list has no entry, or more than it can have";
		return -1;
	}
	for (unsigned i = 0; i < got->n; i++) {
		const struct sb_net_entry *e = &got->e[i];
		if (!e->host[0] || !memchr(e->host, '\0', sizeof e->host) || e->port > 65535) {
			*why = "an entry of the allow-list is not a host and port";
			return -1;
		}
	}
	*l = *got;
	return 0;
}

/* A field of a report: printable ASCII, no tab (the host is what the code
 * asked for, and the result's JSON and text carry it). */
static void field(char *out, size_t n, const char *from, size_t len)
{
	size_t i = 0;
	for (; i + 1 < n && i < len && from[i]; i++)
		out[i] = from[i] >= 0x20 && from[i] < 0x7f ? from[i] : '?';
	out[i] = '\0';
}

void sb_proxy_refusal_send(int control_fd, unsigned id, const struct sb_net_refusal *r)
{
	if (control_fd < 0)
		return;
	char host[sizeof r->host], who[sizeof r->sandbox], why[sizeof r->why];
	field(host, sizeof host, r->host, sizeof host);
	field(who, sizeof who, r->sandbox, sizeof who);
	field(why, sizeof why, r->why, sizeof why);
	char msg[SB_PROXY_REPORT_MAX];
	int n = snprintf(msg, sizeof msg, REFUSED " %u %u %u\t%s\t%s\t%s", id, r->status, r->port, host, who, why);
	if (n > 0 && (size_t)n < sizeof msg && send(control_fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* a full or closed socket: the report is lost, the answer is not */
	}
}

int sb_proxy_refusal_parse(const char *msg, size_t len, unsigned *id, struct sb_net_refusal *r)
{
	char copy[SB_PROXY_REPORT_MAX + 1];
	if (len >= sizeof copy)
		return -1;
	memcpy(copy, msg, len);
	copy[len] = '\0';
	unsigned status, port;
	int off = 0;
	if (sscanf(copy, REFUSED " %u %u %u\t%n", id, &status, &port, &off) != 3 || !off)
		return -1;
	const char *host = copy + off, *who = strchr(host, '\t'), *why = who ? strchr(who + 1, '\t') : NULL;
	if (!why)
		return -1;
	r->status = status;
	r->port = port;
	field(r->host, sizeof r->host, host, (size_t)(who - host));
	field(r->sandbox, sizeof r->sandbox, who + 1, (size_t)(why - who - 1));
	field(r->why, sizeof r->why, why + 1, strlen(why + 1));
	return 0;
}

int sb_proxy_tally_send(int control_fd, const uint64_t counts[3])
{
	if (control_fd < 0 || !(counts[0] | counts[1] | counts[2]))
		return -1;
	char msg[96];
	int n = snprintf(msg, sizeof msg, TALLY, (unsigned long long)counts[0], (unsigned long long)counts[1],
			 (unsigned long long)counts[2]);
	return send(control_fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) == n ? 0 : -1;
}

int sb_proxy_tally_parse(const char *msg, size_t len, uint64_t counts[3])
{
	char copy[96];
	if (len >= sizeof copy)
		return -1;
	memcpy(copy, msg, len);
	copy[len] = '\0';
	unsigned long long v[3];
	if (sscanf(copy, TALLY, &v[0], &v[1], &v[2]) != 3)
		return -1;
	for (int i = 0; i < 3; i++) {
		if (v[i] >= 1u << 30)
			return -1;
		counts[i] = v[i];
	}
	return 0;
}
