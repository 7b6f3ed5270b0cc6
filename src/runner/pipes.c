#include "runner/pipes.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/fd.h"

int sb_spawn_piped(const struct sb_backend *be, const struct sb_sandbox_req *req, struct sb_sandbox *sb, int *pidfd,
		   struct sb_error *err)
{
	*pidfd = -1;
	if (sb_backend_spawn(be, req, sb, err))
		return -1;
	*pidfd = (int)syscall(SYS_pidfd_open, sb->pid, 0);
	sb_set_nonblock(sb->stdin_fd, 1);
	sb_set_nonblock(sb->stdout_fd, 1);
	sb_set_nonblock(sb->stderr_fd, 1);
	return 0;
}

int sb_pipe_drain(int *fd, unsigned max_reads, int (*fn)(void *ctx, const char *p, size_t n), void *ctx)
{
	char buf[65536];
	for (unsigned i = 0; i < max_reads && *fd >= 0; i++) {
		ssize_t n = SB_RETRY_EINTR(read(*fd, buf, sizeof buf));
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0) {
			sb_close(fd);
			return 1;
		}
		int rc = fn(ctx, buf, (size_t)n);
		if (rc)
			return rc < 0 ? -1 : 0;
	}
	return 0;
}

void sb_pipe_write(int *fd, const char *p, size_t n, size_t *off)
{
	while (*off < n && *fd >= 0) {
		ssize_t w = SB_RETRY_EINTR(write(*fd, p + *off, n - *off));
		if (w < 0 && errno == EAGAIN)
			return;
		if (w <= 0) {
			sb_close(fd);
			return;
		}
		*off += (size_t)w;
	}
}
