/* File descriptor helpers: EINTR-safe, cleanup-friendly. */
#ifndef SAGEBOX_FD_H
#define SAGEBOX_FD_H

#include <stddef.h>
#include <sys/types.h>

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
