/* The user's package presets (packages/packages.h) in the native sandbox:
 * the host directory opened (as nat_open_dirs opens a share) before the
 * root tmpfs covers the host's tree, bound read-only at SB_PACKAGES_MOUNT
 * after the system directories: a bind of the directory, so what `packages
 * add` puts there later shows in a sandbox already running. Runs in init,
 * single-threaded: failures are reported with nat_child_fail. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/native/native.h"

int nat_open_packages(const struct nat_plan *p)
{
	if (!p->packages || !p->packages[0])
		return -1;
	int fd = open(p->packages, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* Gone since the backend opened (the user removed it): the sandbox
	 * starts as it would without it. */
	if (fd < 0 && errno == ENOENT)
		return -1;
	if (fd < 0)
		nat_child_fail_hint("mounts", errno,
				    "the sandbox user must be able to read it (chmod 755), or remove it",
				    "cannot open the packages directory %s", p->packages);
	return fd;
}

void nat_mount_packages(int fd, const char *newroot)
{
	/* Read-only, nosuid, nodev (nat_bind): the code imports the user's
	 * packages and can never change them for the next sandbox. */
	if (fd >= 0)
		nat_bind_fd_at(fd, newroot, SB_PACKAGES_MOUNT);
}
