/* The driver's precompiled code (runner/warm/driver_code.h) in the native
 * sandbox: the host file opened before the root tmpfs covers the host's
 * tree, bound read-only at SB_DRIVER_CODE_MOUNT, where the command's
 * SAGEBOX_DRIVER_CODE points. Best effort: a file the sandbox user cannot
 * open (gone meanwhile, or below a directory closed to it) is left out, and
 * the driver compiles itself as it does without one. Runs in init,
 * single-threaded. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/native/native.h"

int nat_open_driver_code(const struct nat_plan *p)
{
	if (!p->driver_code)
		return -1;
	/* Opened as the sandbox user (init runs in its user namespace): only
	 * a file that user may open anyway. O_NOFOLLOW and a regular file
	 * only: a link planted in its place binds nothing else. */
	int fd = open(p->driver_code, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void nat_mount_driver_code(int fd, const char *newroot)
{
	/* Read-only (nat_bind): no job changes the next sandbox's driver. */
	if (fd >= 0)
		nat_bind_fd_at(fd, newroot, SB_DRIVER_CODE_MOUNT);
}
