/* The control socket between a sagebox and its network proxy (a
 * SOCK_SEQPACKET socketpair; the proxy's end is --control-fd): both
 * directions of it, the one place that writes and reads its messages.
 *
 * sagebox -> proxy: first the allow-list, the value sagebox's config
 * parsed (config/netlist.h), sent as it is (the proxy is the same program,
 * exec'd from /proc/self/exe), so the setting's text is parsed once, by the
 * config, and never again by the proxy. Then "add ID WHO" with one
 * listening socket in SCM_RIGHTS, "who ID WHO" (the sandbox's label for
 * connections made from now on: the client and call, session or job it
 * now serves), "del ID" (the sandbox ended: its socket and connections
 * close). The proxy ends when the socket hangs up: sagebox is gone.
 *
 * proxy -> sagebox: each connection it refused or could not serve, before
 * it answers the code: which sandbox, which host and port, the answer's
 * status and why. The runner puts them in the call's result, so a refusal
 * reaches the model from the proxy itself, never from the code's output.
 * And a tally of the connections closed, by outcome, which the server
 * counts for Prometheus. */
#ifndef SAGEBOX_NET_PROXY_CONTROL_H
#define SAGEBOX_NET_PROXY_CONTROL_H

#include <stdint.h>

#include "config/netlist.h"
#include "core/result.h"

#define SB_PROXY_MSG_MAX 256     /* an "add", "who" or "del" (a label is cut to fit) */
#define SB_PROXY_REPORT_MAX 1024 /* a refusal report */

/* sagebox: send l. -1 with errno. */
int sb_proxy_list_send(int control_fd, const struct sb_netlist *l);
/* The proxy: wait for the list and check it (its size, the number of
 * entries, every host a terminated, non-empty string, every port a port).
 * -1 with *why set when the first message is not such a list. */
int sb_proxy_list_recv(int control_fd, struct sb_netlist *l, const char **why);

/* The proxy: report that the sandbox of socket `id` was refused r (best
 * effort, never blocking: a sagebox that does not read them loses reports,
 * the proxy never waits for it). */
void sb_proxy_refusal_send(int control_fd, unsigned id, const struct sb_net_refusal *r);
/* sagebox: a message from the proxy; 0 and *id, *r when it is a refusal
 * report, -1 otherwise. */
int sb_proxy_refusal_parse(const char *msg, size_t len, unsigned *id, struct sb_net_refusal *r);

/* The proxy: "tally ALLOWED REFUSED FAILED", the connections closed since
 * the last tally by outcome (the order of enum px_outcome), sent without
 * waiting. 0 when sent; -1 when there is nothing to tell, no sagebox, or
 * a full socket (then the counts go with a later tally). */
int sb_proxy_tally_send(int control_fd, const uint64_t counts[3]);
/* sagebox: 0 and counts when msg is a tally whose counts a connection rate
 * could reach (the proxy faces the sandboxes), -1 otherwise. */
int sb_proxy_tally_parse(const char *msg, size_t len, uint64_t counts[3]);

#endif
