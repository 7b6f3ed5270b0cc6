#include "util/fd.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int sb_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = SB_RETRY_EINTR(write(fd, c, n));
		if (w < 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

ssize_t sb_read_retry(int fd, void *p, size_t n)
{
	return SB_RETRY_EINTR(read(fd, p, n));
}

int sb_set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -1;
	fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	return fcntl(fd, F_SETFL, fl);
}

int sb_pipe(int fds[2])
{
	return pipe2(fds, O_CLOEXEC);
}

void sb_close(int *fd)
{
	if (fd && *fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
		*fd = -1;
	}
}
