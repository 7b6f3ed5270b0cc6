/* The runner's side of the network proxy: one `sagebox proxy
 * --control-fd` child per sagebox process when `network` is a list, and
 * one listening Unix socket per sandbox handed to it ("add ID WHO", "del
 * ID": proxy.h). Each socket lives in a directory of its own, which the
 * backend binds into that one sandbox at SB_NET_MOUNT; the driver's relay
 * there (src/worker/driver/netrelay.py) serves it on 127.0.0.1:SB_NET_PORT.
 * Process-wide (one proxy per process), thread-safe. */
#ifndef SAGEBOX_NET_SPAWN_H
#define SAGEBOX_NET_SPAWN_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "config/config.h"
#include "core/result.h"
#include "util/error.h"

struct sb_netslot {
	unsigned id;        /* 0: none */
	char dir[PATH_MAX]; /* host directory holding proxy.sock */
};

/* Start the proxy when cfg->net lists hosts (nothing otherwise: returns 0
 * and the rest are no-ops). Its sockets go below a fresh directory that
 * the proxy removes when it ends, so nothing is left after a SIGKILL. */
int sb_netproxy_start(const struct sb_config *cfg, struct sb_error *err);
/* Whether a proxy runs (its pid, or 0). */
pid_t sb_netproxy_pid(void);
/* A new socket for one sandbox, served as `who` in the audit log. With no
 * proxy, slot->id stays 0 and this returns 0. */
int sb_netproxy_add(const char *who, struct sb_netslot *slot, struct sb_error *err);
/* The sandbox now serves `who` (a client's call, session or job): the
 * audit names it for connections made from now on. No-op without a socket. */
void sb_netproxy_who(const struct sb_netslot *slot, const char *who);
/* What the proxy refused a sandbox, as the proxy reports it on the
 * control socket (proxy_control.h), never read from the code's output: a
 * mark taken when a call starts, then the refusals of slot's sandbox since
 * that mark, into res (the first SB_NET_REFUSALS_MAX, and how many more).
 * No-op without a socket. */
unsigned sb_netproxy_mark(const struct sb_netslot *slot);
void sb_netproxy_refusals(const struct sb_netslot *slot, unsigned mark, struct sb_result *res);
/* The sandbox ended: the proxy closes its socket and connections. */
void sb_netproxy_del(struct sb_netslot *slot);
/* Hang up on the proxy (it exits and removes its directory) and reap it. */
void sb_netproxy_stop(void);

#endif
