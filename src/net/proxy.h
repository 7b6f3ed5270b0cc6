/* sagebox's network proxy: one process per sagebox, never root,
 * the only way out of a sandbox when the user set `network`. Each sandbox
 * gets its own listening Unix socket (bound into that sandbox alone), so
 * every connection is known by where it came from. It speaks HTTP CONNECT
 * and plain HTTP forwarding, resolves names itself and refuses what the
 * allow-list does not name (config/netlist.h, dest.h). One epoll loop;
 * name lookups run on short threads so one slow name holds nobody else. */
#ifndef SAGEBOX_NET_PROXY_H
#define SAGEBOX_NET_PROXY_H

#include "config/netlist.h"

/* Run the proxy with the allow-list `list` until control_fd hangs up (or,
 * with control_fd -1, for ever); control_fd's messages are
 * proxy_control.h's. listen_fd, if not -1, is served as sandbox `who` (the
 * command line: `sagebox proxy --listen PATH`). audit_fd (-1: none) gets
 * one JSON line per connection. Returns the exit status. */
int sb_proxy_run(const struct sb_netlist *list, int audit_fd, int control_fd, int listen_fd, const char *who);

#endif
