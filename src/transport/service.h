/* The user-level service: `sagebox mcp` started by a front
 * (cli/cli_service_front.c) with SAGEBOX_SERVICE_SOCKET set. It keeps the
 * usual runner, warm pool and MCP server, and serves MCP over a Unix
 * socket: one connection per front (one restarted host app each time),
 * each an MCP client of its own ("svc-N") over the stdio transport's code,
 * so sessions, background jobs and tasks never cross connections; a
 * connection's sessions and jobs end with it. Every connection is the same
 * uid, the same client identity and the same settings (the socket's name
 * is their hash), so they may share the warm workers, as the calls of one
 * `sagebox mcp` do today. With no connection, job or session for
 * service_idle_seconds, or on SIGTERM, the service unlinks its socket and
 * stops everything like `sagebox mcp` at stdin EOF.
 *
 * The handshake: after accepting, the service writes one line, SB_SERVICE_OK
 * or SB_SERVICE_REFUSED and why (then closes); MCP's newline-delimited
 * JSON-RPC follows the OK line. The front relays nothing before that line,
 * so it can still fall back to serving in-process. */
#ifndef SAGEBOX_TRANSPORT_SERVICE_H
#define SAGEBOX_TRANSPORT_SERVICE_H

#include <stddef.h>
#include <sys/types.h>

#include "mcp/mcp.h"
#include "runner/runner.h"

#define SB_SERVICE_OK "sagebox-service ok\n"
#define SB_SERVICE_REFUSED "sagebox-service refused: "
/* The environment the front hands the service (unset by it at once). */
#define SB_SERVICE_SOCKET_ENV "SAGEBOX_SERVICE_SOCKET"
#define SB_SERVICE_IDENTITY_ENV "SAGEBOX_SERVICE_IDENTITY"

/* A client's identity: the executable of pid (its host app), from
 * readlink /proc/PID/exe, or "unknown" when it cannot be read. */
void sb_service_identity(pid_t pid, char *out, size_t n);
/* pid's parent (/proc/PID/stat), or -1 when pid is gone. */
pid_t sb_service_parent(pid_t pid);
/* The lock beside a service's socket: a front holds it while it connects
 * or starts the service, and an idle service takes it before it exits.
 * 0, or -1 when the path does not fit in n. */
int sb_service_lock_path(const char *sock, char *out, size_t n);

struct sb_service_opts {
	const char *socket_path;   /* bound here (a stale file is replaced) */
	const char *identity;      /* every peer's parent must run this executable */
	unsigned idle_s;           /* exit after this long unused */
	int stop_fd;               /* readable: stop (the signal handler writes to it) */
};

/* Bind, then serve connections until idle or stopped; every connection is
 * ended and its calls, sessions and jobs with it before this returns. The
 * socket is unlinked. 0, or -1 when the socket cannot be bound (said on
 * stderr). */
int sb_service_serve(const struct sb_service_opts *o, struct sb_mcp_server *srv, struct sb_runner *runner);

#endif
