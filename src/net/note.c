#include "net/note.h"

#include <stdio.h>
#include <string.h>

/* What Python (socket, urllib, requests, pip), curl, git and wget print
 * when a name does not resolve or a connection cannot be made, and what
 * sagebox's proxy answers. */
static const char *const failures[] = {
	"Temporary failure in name resolution",
	"Name or service not known",
	"No address associated with hostname",
	"Could not resolve host",
	"Could not resolve proxy",
	"Failed to establish a new connection",
	"Network is unreachable",
	"getaddrinfo failed",
	"unable to resolve host address",
	"is not in the network allow-list",
	"Tunnel connection failed", /* pip and requests, on the proxy's 403 to a CONNECT */
};

const char *sb_net_failure_note(const char *text, size_t len, const struct sb_netlist *l, char *out,
				size_t out_size)
{
	bool hit = false;
	for (size_t i = 0; text && !hit && i < sizeof failures / sizeof failures[0]; i++)
		hit = memmem(text, len, failures[i], strlen(failures[i])) != NULL;
	if (!hit)
		return NULL;
	if (!l->n)
		return "[network] This sandbox has no network: names do not resolve and connections fail, so "
		       "retrying will not help. The user can allow hosts with the setting `network`.";
	char hosts[1024];
	sb_netlist_format(l, hosts, sizeof hosts);
	snprintf(out, out_size,
		 "[network] Only these hosts are reachable, through sagebox's proxy: %s (setting: network). "
		 "Others are refused: retrying will not help.",
		 hosts);
	return out;
}
