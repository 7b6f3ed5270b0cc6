/* Where a request may go (proxy_decide.c), for the proxy's loop: each
 * step ends in a connection relayed, or in our answer (proxy_conn.h). */
#ifndef SAGEBOX_NET_PROXY_DECIDE_H
#define SAGEBOX_NET_PROXY_DECIDE_H

#include "net/proxy_conn.h"

/* The head is complete: check it against the list and start the lookup. */
void px_decide(struct proxy *px, struct conn *c);
/* The lookup is back: keep the addresses the list lets us reach, connect. */
void px_resolved(struct proxy *px, struct conn *c);
/* The upstream connect finished: relay, or try the next address. */
void px_connected(struct proxy *px, struct conn *c);

#endif
