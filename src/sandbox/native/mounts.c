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

/* Per-mount flags (mountinfo field 6) as MS_* bits, so a remount keeps the
 * flags the kernel locked in from the host (atime, nosuid...). */
static unsigned long opts_to_flags(const char *opts)
{
	static const struct {
		const char *name;
		unsigned long flag;
	} map[] = {{"ro", MS_RDONLY},     {"nosuid", MS_NOSUID},	 {"nodev", MS_NODEV},
		   {"noexec", MS_NOEXEC}, {"noatime", MS_NOATIME}, {"nodiratime", MS_NODIRATIME},
		   {"relatime", MS_RELATIME}};
	unsigned long f = 0;
	const char *p = opts;
	while (*p) {
		size_t len = strcspn(p, ",");
		for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
			if (strlen(map[i].name) == len && strncmp(p, map[i].name, len) == 0)
				f |= map[i].flag;
		p += len;
		if (*p == ',')
			p++;
	}
	return f;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
		    r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* The fallback for kernels without mount_setattr (< 5.12): walk
 * /proc/self/mountinfo as bubblewrap does and remount every mount at or
 * below path, keeping its locked flags and adding ro,nosuid,nodev. */
static void remount_walk(const char *path)
{
	static char buf[1 << 18];
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		nat_child_fail("mounts", errno, "open /proc/self/mountinfo");
	size_t len = 0;
	ssize_t r;
	while ((r = SB_RETRY_EINTR(read(fd, buf + len, sizeof buf - 1 - len))) > 0)
		len += (size_t)r;
	close(fd);
	if (len >= sizeof buf - 1)
		nat_child_fail("mounts", 0, "/proc/self/mountinfo is larger than %zu bytes", sizeof buf);
	buf[len] = '\0';
	size_t plen = strlen(path);
	for (char *line = buf; line && *line;) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* id parent maj:min root mountpoint options ... */
		char *f[6] = {0};
		char *save = NULL;
		int n = 0;
		for (char *t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
			f[n++] = t;
		line = next;
		if (n < 6)
			continue;
		unescape(f[4]);
		if (strncmp(f[4], path, plen) != 0 || (f[4][plen] != '\0' && f[4][plen] != '/'))
			continue;
		unsigned long flags = opts_to_flags(f[5]) | MS_RDONLY | MS_NOSUID | MS_NODEV;
		if (mount(NULL, f[4], NULL, MS_BIND | MS_REMOUNT | flags, NULL) != 0 && errno != ENOENT &&
		    errno != EACCES)
			nat_child_fail("mounts", errno, "remount %s read-only", f[4]);
	}
}

void nat_remount_ro_recursive(const char *path)
{
	/* Read-only stops the code from altering the system; nosuid stops a
	 * setuid binary from elevating; nodev stops device nodes on the bound
	 * filesystems from giving raw hardware access. Every submount too. */
#ifndef NAT_TEST_MOUNTINFO_WALK /* defined only to test the fallback */
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
	if (syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof attr) == 0)
		return;
	if (errno != ENOSYS)
		nat_child_fail("mounts", errno, "mount_setattr(%s, ro,nosuid,nodev, recursive)", path);
#endif
	remount_walk(path);
}

void nat_bind(const char *src, const char *dst, bool device)
{
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0)
		nat_child_fail("mounts", errno, "bind %s on %s", src, dst);
	if (!device) {
		nat_remount_ro_recursive(dst);
		return;
	}
	/* A device node: keep dev (the node must open) but no suid, no exec. */
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC};
	if (syscall(SYS_mount_setattr, AT_FDCWD, dst, 0, &attr, sizeof attr) != 0 &&
	    mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NOEXEC, NULL) != 0)
		nat_child_fail("mounts", errno, "remount %s nosuid,noexec", dst);
}

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
	/* A proc of the new pid namespace: host processes are invisible. */
	if (mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		nat_child_fail("mounts", errno, "mount a fresh /proc");
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
	path_in(dst, sizeof dst, "/etc");
	nat_make_etc(dst);
	fresh_proc();
	path_in(dst, sizeof dst, "/dev");
	nat_make_dev(dst, &p->limits);
	writable_tmp(&p->limits);
	nat_mount_workspace(p, NEWROOT);
	nat_mount_shares(p, share_fds, NEWROOT);
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
