/* A sandbox's pipes, host side, for the runner's feeders: start a sandbox
 * with its pipes non-blocking and a pidfd for its command, read what is
 * waiting, write what a pipe takes now. Shared by fresh jobs and warm
 * workers. */
#ifndef SAGEBOX_PIPES_H
#define SAGEBOX_PIPES_H

#include <stddef.h>

#include "sandbox/sandbox.h"
#include "util/error.h"

/* Start req in a new sandbox of backend be. Its stdin/stdout/stderr pipes
 * are made non-blocking; *pidfd becomes readable when the sandbox's command
 * exits (-1 where the kernel has no pidfd). */
int sb_spawn_piped(const struct sb_backend *be, const struct sb_sandbox_req *req, struct sb_sandbox *sb, int *pidfd,
		   struct sb_error *err);

/* Read what is waiting on the non-blocking *fd, at most max_reads reads of
 * 64 KiB, handing each chunk to fn (which returns 0 to go on, 1 to stop
 * reading for now, -1 on failure). Returns 1 at end of file or on a read
 * error (*fd is then closed), -1 when fn failed, 0 otherwise. */
int sb_pipe_drain(int *fd, unsigned max_reads, int (*fn)(void *ctx, const char *p, size_t n), void *ctx);

/* Write p[*off, n) to the non-blocking *fd as far as it takes it now,
 * advancing *off. When the reader is gone (EPIPE) or another error, *fd is
 * closed: what the far side did is said by its own end. */
void sb_pipe_write(int *fd, const char *p, size_t n, size_t *off);

#endif
