/* Optional steps of the new root (mounts.c): a session's workspace, a
 * writable tmpfs at /work of its own size, the host directories the
 * user chose to share, bound read-only at /data/NAME in every sandbox, and
 * with network the sandbox's proxy socket directory at SB_NET_MOUNT.
 * Runs in init, single-threaded: failures are reported with
 * nat_child_fail. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/native/native.h"

static void under(char *out, size_t n, const char *root, const char *a, const char *b)
{
	if (snprintf(out, n, "%s%s%s", root, a, b) >= (int)n)
		nat_child_fail("mounts", ENAMETOOLONG, "%s%s", a, b);
}

void nat_open_dirs(const char (*dirs)[PATH_MAX], unsigned n, int *fds, const char *what, const char *hint)
{
	/* Opened by path now, as the unprivileged host user (a directory it
	 * cannot read is refused here, not exposed), and bound later from
	 * the fd: the root tmpfs will cover anything below NEWROOT. */
	for (unsigned i = 0; i < n; i++) {
		fds[i] = open(dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fds[i] < 0)
			nat_child_fail_hint("mounts", errno, hint, "cannot open %s %s", what, dirs[i]);
	}
}

void nat_open_shares(const struct nat_plan *p, int fds[SB_SHARES_MAX])
{
	nat_open_dirs(p->shares, p->n_shares < SB_SHARES_MAX ? p->n_shares : SB_SHARES_MAX, fds,
		      "the shared directory", "the sandbox user must be able to read it, or drop it from share");
}

void nat_mount_shares(const struct nat_plan *p, const int fds[SB_SHARES_MAX], const char *newroot)
{
	char dst[PATH_MAX], src[64];
	if (!p->n_shares)
		return;
	under(dst, sizeof dst, newroot, SB_SHARE_MOUNT, "");
	if (mkdir(dst, 0755) != 0)
		nat_child_fail("mounts", errno, "mkdir %s", dst);
	for (unsigned i = 0; i < p->n_shares && i < SB_SHARES_MAX; i++) {
		under(dst, sizeof dst, newroot, SB_SHARE_MOUNT, strrchr(p->shares[i], '/'));
		if (mkdir(dst, 0755) != 0)
			nat_child_fail("mounts", errno, "mkdir %s", dst);
		snprintf(src, sizeof src, "/proc/self/fd/%d", fds[i]);
		/* Read-only, nosuid, nodev on it and every submount (nat_bind):
		 * the code can read what the user shared, never change it. */
		nat_bind(src, dst, false);
		close(fds[i]);
	}
}

void nat_mount_workspace(const struct nat_plan *p, const char *newroot)
{
	char dst[PATH_MAX], opts[96];
	if (!p->workspace_bytes)
		return;
	under(dst, sizeof dst, newroot, SB_SANDBOX_WORKSPACE, "");
	if (mkdir(dst, 0755) != 0)
		nat_child_fail("mounts", errno, "mkdir %s", dst);
	/* Size-limited (its pages are charged to the sandbox's memory cgroup
	 * too), nosuid,nodev: a session's files cannot fill the host's memory
	 * or carry a setuid binary or a device node. */
	snprintf(opts, sizeof opts, "mode=0755,size=%llu,nr_inodes=65536", (unsigned long long)p->workspace_bytes);
	if (mount("sagebox-work", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
		nat_child_fail("mounts", errno, "mount tmpfs on %s", SB_SANDBOX_WORKSPACE);
}

int nat_open_net(const struct nat_plan *p)
{
	if (!p->net_dir)
		return -1;
	int fd = open(p->net_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		nat_child_fail_hint("mounts", errno, "the sandbox user must be able to reach sagebox's socket "
				    "directory (below TMPDIR)", "cannot open the proxy socket directory %s", p->net_dir);
	return fd;
}

void nat_mount_net(int fd, const char *newroot)
{
	char dst[PATH_MAX], src[64];
	if (fd < 0)
		return;
	/* Only this sandbox's own directory, read-only: its one socket,
	 * which the proxy knows as this sandbox. No other sandbox's socket
	 * has a path in here. */
	under(dst, sizeof dst, newroot, "/run", "");
	if (mkdir(dst, 0755) != 0 && errno != EEXIST)
		nat_child_fail("mounts", errno, "mkdir %s", dst);
	under(dst, sizeof dst, newroot, SB_NET_MOUNT, "");
	if (mkdir(dst, 0755) != 0)
		nat_child_fail("mounts", errno, "mkdir %s", dst);
	snprintf(src, sizeof src, "/proc/self/fd/%d", fd);
	nat_bind(src, dst, false);
	close(fd);
}
