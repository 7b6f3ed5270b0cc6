/* File descriptor helpers: EINTR-safe, cleanup-friendly. */
#ifndef SAGEBOX_FD_H
#define SAGEBOX_FD_H

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>

/* Evaluate a system call until it is not interrupted by a signal (glibc's
 * TEMP_FAILURE_RETRY, which needs _GNU_SOURCE and unistd.h). */
#define SB_RETRY_EINTR(expr)                                  \
	({                                                     \
		__typeof__(expr) sb_r_;                        \
		do                                             \
			sb_r_ = (expr);                        \
		while (sb_r_ == -1 && errno == EINTR);         \
		sb_r_;                                         \
	})

/* Write all of p; returns 0, or -1 with errno (EPIPE when the reader left). */
int sb_write_all(int fd, const void *p, size_t n);
/* read(2) retried on EINTR. */
ssize_t sb_read_retry(int fd, void *p, size_t n);
int sb_set_nonblock(int fd, int on);
/* pipe2 with O_CLOEXEC. */
int sb_pipe(int fds[2]);
void sb_close(int *fd);

static inline void sb_closep(int *fd) { sb_close(fd); }
#define SB_AUTO_FD __attribute__((cleanup(sb_closep))) int

#endif
