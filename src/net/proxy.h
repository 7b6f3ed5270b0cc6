/* sagebox's network proxy: one process per sagebox, never root,
 * the only way out of a sandbox when the user set `network`. Each sandbox
 * gets its own listening Unix socket (bound into that sandbox alone), so
 * every connection is known by where it came from. It speaks HTTP CONNECT
 * and plain HTTP forwarding, resolves names itself and refuses what the
 * allow-list does not name (allowlist.h, dest.h). One epoll loop;
 * name lookups run on short threads so one slow name holds nobody else. */
#ifndef SAGEBOX_NET_PROXY_H
#define SAGEBOX_NET_PROXY_H

#include "net/allowlist.h"

/* Caps per sandbox (per listening socket). */
#define SB_PROXY_CONNS_MAX 32                  /* connections at once */
#define SB_PROXY_BYTES_MAX (2ull << 30)        /* bytes each way over the sandbox's life */
#define SB_PROXY_IDLE_S 120                    /* a connection silent this long is closed */
#define SB_PROXY_HEAD_S 15                     /* the request head must arrive within this */
#define SB_PROXY_LINGER_S 10                   /* after our answer, the client's bytes are dropped this long at most */

/* The control messages a sagebox sends its proxy on control_fd (a
 * SOCK_SEQPACKET socket): "add ID WHO" with one listening socket in
 * SCM_RIGHTS, "who ID WHO" (the sandbox's label for connections made from
 * now on: the client and call, session or job it now serves), "del ID"
 * (the sandbox ended: its socket and connections close). The proxy ends when control_fd hangs up: sagebox is gone.
 * The one message back: "tally ALLOWED REFUSED FAILED", the connections
 * closed since the last tally by outcome (sent without waiting; what a
 * full socket refuses goes with the next one), which the server counts
 * for Prometheus. */
#define SB_PROXY_MSG_MAX 256
#define SB_PROXY_TALLY "tally %llu %llu %llu"

/* Run the proxy until control_fd hangs up (or, with control_fd -1, for
 * ever). listen_fd, if not -1, is served as sandbox `who` (the command
 * line: `sagebox proxy --listen PATH`). audit_fd (-1: none) gets one JSON
 * line per connection. Returns the exit status. */
int sb_proxy_run(const struct sb_netlist *list, int audit_fd, int control_fd, int listen_fd, const char *who);

#endif
