/* Optional steps of the new root (mounts.c): a session's workspace, a
 * writable tmpfs at /work of its own size, the user's project folder
 * read-write at /work/project, the host directories the
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
#include <sys/statvfs.h>
#include <sys/syscall.h>
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

void nat_open_project(const struct nat_plan *p, int fds[2])
{
	fds[0] = fds[1] = -1;
	if (!p->project_dir)
		return;
	/* As the unprivileged host user (as root: sandbox_user), so a folder
	 * it may not enter is refused here, never exposed. */
	fds[0] = open(p->project_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fds[0] < 0)
		nat_child_fail_hint("mounts", errno, "the sandbox's user must be able to enter and write it; fix its "
				    "permissions or unset project_dir", "cannot open the project folder %s", p->project_dir);
	/* Its .git (a directory, or a file naming one) read-only: the hooks
	 * and config in it are run by git on the host (core.fsmonitor runs
	 * at `git status`). */
	fds[1] = openat(fds[0], ".git", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fds[1] >= 0 && (fstat(fds[1], &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))) {
		close(fds[1]);
		fds[1] = -1;
	}
}

/* Add nosuid, nodev (and noexec) to the mount at dst, keeping whatever the
 * kernel locked in from the host. */
static void restrict_mount(const char *dst, bool exec)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (exec ? 0 : MOUNT_ATTR_NOEXEC)};
	if (syscall(SYS_mount_setattr, AT_FDCWD, dst, 0, &attr, sizeof attr) == 0)
		return;
	if (errno != ENOSYS)
		nat_child_fail("mounts", errno, "mount_setattr(%s, nosuid,nodev)", dst);
	struct statvfs sv;
	unsigned long keep = 0;
	if (statvfs(dst, &sv) == 0) {
		keep |= (sv.f_flag & ST_RDONLY ? MS_RDONLY : 0) | (sv.f_flag & ST_NOATIME ? MS_NOATIME : 0) |
			(sv.f_flag & ST_NODIRATIME ? MS_NODIRATIME : 0) | (sv.f_flag & ST_RELATIME ? MS_RELATIME : 0) |
			(sv.f_flag & ST_NOEXEC ? MS_NOEXEC : 0);
	}
	if (mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | (exec ? 0 : MS_NOEXEC) | keep, NULL) != 0)
		nat_child_fail("mounts", errno, "remount %s nosuid,nodev", dst);
}

void nat_mount_project(const struct nat_plan *p, const int fds[2], const char *newroot)
{
	char dst[PATH_MAX], src[64];
	if (fds[0] < 0)
		return;
	under(dst, sizeof dst, newroot, SB_PROJECT_MOUNT, "");
	if (mkdir(dst, 0755) != 0)
		nat_child_fail("mounts", errno, "mkdir %s", dst);
	snprintf(src, sizeof src, "/proc/self/fd/%d", fds[0]);
	/* Read-write, this one filesystem only (not recursive: a disk mounted
	 * somewhere inside the folder stays out); nosuid and nodev always,
	 * noexec unless the user set project_exec. A file the code makes
	 * there is the user's, on the user's disk: no setuid bit works, no
	 * device node opens. */
	if (mount(src, dst, NULL, MS_BIND, NULL) != 0)
		nat_child_fail("mounts", errno, "bind the project folder on %s", SB_PROJECT_MOUNT);
	restrict_mount(dst, p->project_exec);
	close(fds[0]);
	if (fds[1] >= 0) {
		under(dst, sizeof dst, newroot, SB_PROJECT_MOUNT, "/.git");
		snprintf(src, sizeof src, "/proc/self/fd/%d", fds[1]);
		nat_bind(src, dst, false);
		close(fds[1]);
	}
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
