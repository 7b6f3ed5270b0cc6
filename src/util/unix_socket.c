#include "util/unix_socket.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Fill *a for path; -1 with ENAMETOOLONG when it does not fit. */
static int unix_addr(struct sockaddr_un *a, const char *path)
{
	size_t n = strlen(path);
	if (n >= sizeof a->sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	memcpy(a->sun_path, path, n + 1);
	return 0;
}

/* connect or bind a new socket to path; the socket, or -1 with errno. */
static int unix_socket_at(const char *path, int flags, bool to_bind)
{
	struct sockaddr_un a;
	if (unix_addr(&a, path) < 0)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
	if (fd < 0)
		return -1;
	const struct sockaddr *sa = (const struct sockaddr *)&a;
	if ((to_bind ? bind(fd, sa, sizeof a) : connect(fd, sa, sizeof a)) < 0) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int sb_unix_connect(const char *path, int flags)
{
	return unix_socket_at(path, flags, false);
}

int sb_unix_bind(const char *path)
{
	return unix_socket_at(path, 0, true);
}
