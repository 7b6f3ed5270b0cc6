/* The control socket of `sagebox mcp --http`: how `sagebox mcp --drain`
 * (an operator, a rolling restart script, a Kubernetes preStop hook) asks
 * the running server of an instance to drain. A Unix socket in sagebox's
 * state directory (private: mode 0700, util/statedir.h), named after the
 * instance, answering only processes of the same uid:
 *
 *     <state dir>/http-<instance>.ctl
 *
 * One line each way: the asker writes "drain"; the server answers one line
 * ("draining ...") and keeps the connection until it has stopped, then
 * writes "stopped" and closes, so the asker can wait for the end. */
#ifndef SAGEBOX_TRANSPORT_CONTROL_H
#define SAGEBOX_TRANSPORT_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/error.h"

struct sb_control;

/* The socket's path for this instance; 0, or -1 with why. */
int sb_control_path(const char *instance, char *out, size_t n, struct sb_error *err);

/* Listen at path (a stale socket there is replaced; a live one, another
 * server of the same instance and user, is left alone: NULL with why).
 * notify_fd gets one byte 'd' for each drain asked for; the answer line is
 * what status(ctx, buf, n) writes then. */
struct sb_control *sb_control_start(const char *path, int notify_fd,
				    void (*status)(void *ctx, char *buf, size_t n), void *ctx, struct sb_error *err);
/* Tell every asker "stopped", close, unlink the socket (if still ours). */
void sb_control_stop(struct sb_control *c);

/* The asker's side: ask the server at path to drain, print its answers
 * to out; with wait, until it has stopped. 0, or -1 with why (no server
 * listens there: which instance, and where). */
int sb_control_drain(const char *path, bool wait, FILE *out, struct sb_error *err);

#endif
