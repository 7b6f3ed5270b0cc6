/* Which addresses the proxy connects to: a name on the list may
 * still resolve to this machine, the user's LAN or the cloud's metadata
 * service (DNS rebinding, SSRF). Those are reached only when the address
 * itself is on the list too ("mirror.lan:8080, 10.0.0.5:8080"). */
#ifndef SAGEBOX_NET_DEST_H
#define SAGEBOX_NET_DEST_H

#include <stdbool.h>
#include <sys/socket.h>

/* NULL for an ordinary public address; else what it is ("a loopback
 * address", "a link-local address (cloud metadata)", ..., "an address of
 * this machine"). */
const char *sb_net_addr_class(const struct sockaddr *sa);

/* The address as text, without port ("10.0.0.1", "::1"). */
void sb_net_addr_text(const struct sockaddr *sa, char *out, size_t size);

#endif
