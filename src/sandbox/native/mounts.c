/* The new root filesystem, built by init inside the new mount namespace:
 * an empty tmpfs, the system directories bound read-only, a synthetic /etc,
 * a fresh /proc, a tiny /dev, a size-limited writable /tmp; then pivot_root
 * and the host's tree detached. Runs in a single-threaded child: failures
 * are reported with nat_child_fail. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/native/native.h"
#include "util/fd.h"

#define NEWROOT "/tmp" /* a mount point every system has; hidden in our namespace only */

static void path_in(char *out, size_t n, const char *rel)
{
	if (snprintf(out, n, "%s%s", NEWROOT, rel) >= (int)n)
		nat_child_fail("mounts", ENAMETOOLONG, "%s", rel);
}

/* /usr, and /bin /lib ... as the host has them: symlinks into /usr on
 * merged-/usr systems (Debian 12), else directories bound the same way. */
static void system_dirs(void)
{
	static const char *const dirs[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
	char dst[PATH_MAX], target[PATH_MAX];
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		struct stat st;
		if (lstat(dirs[i], &st) != 0) {
			if (i == 0)
				nat_child_fail("mounts", errno, "/usr is missing on the host");
			continue;
		}
		path_in(dst, sizeof dst, dirs[i]);
		if (S_ISLNK(st.st_mode)) {
			ssize_t l = readlink(dirs[i], target, sizeof target - 1);
			if (l < 0)
				nat_child_fail("mounts", errno, "readlink %s", dirs[i]);
			target[l] = '\0';
			if (symlink(target, dst) != 0)
				nat_child_fail("mounts", errno, "symlink %s", dst);
		} else if (S_ISDIR(st.st_mode)) {
			if (mkdir(dst, 0755) != 0)
				nat_child_fail("mounts", errno, "mkdir %s", dst);
			nat_bind(dirs[i], dst, false);
		}
	}
}

static void mkdir_owned(const char *path, mode_t mode)
{
	/* Created by init, whose uid inside is the sandbox uid: owned by it. */
	if (mkdir(path, mode) != 0)
		nat_child_fail("mounts", errno, "mkdir %s", path);
}

static void writable_tmp(const struct sb_limits *l)
{
	char dst[PATH_MAX], opts[128], sub[PATH_MAX];
	path_in(dst, sizeof dst, "/tmp");
	mkdir_owned(dst, 0755);
	/* The only writable place: size-limited so filling it cannot exhaust
	 * the host's memory (tmpfs pages are also charged to the memory
	 * cgroup); nosuid,nodev so nothing placed there can elevate. */
	snprintf(opts, sizeof opts, "mode=1777,size=%llu,nr_inodes=65536", (unsigned long long)l->tmpfs_bytes);
	if (mount("sagebox-tmp", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
		nat_child_fail("mounts", errno, "mount tmpfs on /tmp");
	static const char *const subs[] = {"/tmp/work", "/tmp/home", "/tmp/dot-sage"};
	for (size_t i = 0; i < 3; i++) {
		path_in(sub, sizeof sub, subs[i]);
		mkdir_owned(sub, 0755);
	}
}

static void fresh_proc(void)
{
	char dst[PATH_MAX];
	path_in(dst, sizeof dst, "/proc");
	mkdir_owned(dst, 0555);
	/* A proc of the new pid namespace: host processes are invisible. The
	 * kernel refuses it (EPERM) unless a proc with nothing mounted inside
	 * it is in this mount namespace (fs/namespace.c,
	 * mount_too_revealing): masking part of the host's /proc, as some
	 * systemd options do, would otherwise be undone by a fresh mount. */
	if (mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		nat_child_fail_hint("mounts", errno,
				    errno == EPERM ? "something is mounted over part of the /proc sagebox runs with "
						     "(systemd's ProtectKernelLogs=, ProtectKernelTunables=, "
						     "ProtectHostname=, ProtectProc=, ProcSubset= or a path under /proc "
						     "in InaccessiblePaths=/ReadOnlyPaths= do that; so do a container's "
						     "masked paths); the kernel then lets no user namespace mount its "
						     "own: drop that option from sagebox's unit (`systemctl edit sagebox`)"
						   : NULL,
				    "mount a fresh /proc");
	/* Kernel symbol names (their addresses read as zero for us, the names
	 * still map the kernel's build for an exploit): /dev/null over them,
	 * as the podman backend masks them. */
	path_in(dst, sizeof dst, "/proc/kallsyms");
	if (mount("/dev/null", dst, NULL, MS_BIND, NULL) != 0)
		nat_child_fail("mounts", errno, "mask /proc/kallsyms");
}

void nat_build_root(const struct nat_plan *p)
{
	char dst[PATH_MAX];
	int share_fds[SB_SHARES_MAX], install_fds[NAT_INSTALLS_MAX];
	/* Before the root tmpfs covers NEWROOT: a share may live below it. */
	nat_open_shares(p, share_fds);
	nat_open_installs(p, install_fds);
	int net_fd = nat_open_net(p);
	int packages_fd = nat_open_packages(p);
	int code_fd = nat_open_driver_code(p);
	int project_fds[2];
	nat_open_project(p, project_fds);
	/* Private, recursively: no mount we make propagates to the host, and
	 * no later host mount appears in the sandbox. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		nat_child_fail("mounts", errno, "make / private");
	/* The new root is an empty tmpfs: nothing of the host (no /home,
	 * /root, /var, /run, host /tmp) exists unless bound below. */
	if (mount("sagebox-root", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m,nr_inodes=4096") != 0)
		nat_child_fail("mounts", errno, "mount the root tmpfs");
	system_dirs();
	nat_mount_installs(p, install_fds, NEWROOT);
	nat_mount_packages(packages_fd, NEWROOT);
	nat_mount_driver_code(code_fd, NEWROOT);
	path_in(dst, sizeof dst, "/etc");
	nat_make_etc(dst);
	fresh_proc();
	path_in(dst, sizeof dst, "/dev");
	nat_make_dev(dst, &p->limits);
	writable_tmp(&p->limits);
	nat_mount_workspace(p, NEWROOT);
	nat_mount_project(p, project_fds, NEWROOT);
	nat_mount_shares(p, share_fds, NEWROOT);
	nat_mount_net(net_fd, NEWROOT);
	/* The root itself read-only: no planting files next to /usr. */
	if (mount(NULL, NEWROOT, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
		nat_child_fail("mounts", errno, "remount the root read-only");
	/* pivot_root, then detach the host's tree: unlike chroot, nothing of
	 * the old root stays reachable (no fchdir/.. escape). */
	if (chdir(NEWROOT) != 0)
		nat_child_fail("mounts", errno, "chdir to the new root");
	if (syscall(SYS_pivot_root, ".", ".") != 0)
		nat_child_fail("mounts", errno, "pivot_root");
	if (umount2(".", MNT_DETACH) != 0)
		nat_child_fail("mounts", errno, "detach the old root");
	const char *cwd = p->workspace_bytes ? SB_SANDBOX_WORKSPACE : SB_SANDBOX_WORKDIR;
	if (chdir("/") != 0 || chdir(cwd) != 0)
		nat_child_fail("mounts", errno, "chdir %s", cwd);
}
