/* Read-only binds for the new root (mounts.c, etc.c, dev.c,
 * session_mounts.c): a bind with ro,nosuid,nodev on it and every submount,
 * or a device node's bind that keeps dev, and the directories a mount
 * point needs. On its own so those steps call
 * down into it and never back into mounts.c. Runs in init, single-threaded:
 * failures are reported with nat_child_fail. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/native/native.h"
#include "util/fd.h"

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

void nat_mkdirs_for(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s", path);
	for (char *s = strchr(tmp + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			nat_child_fail("mounts", errno, "mkdir %s", tmp);
		*s = '/';
	}
}

void nat_bind_fd_at(int fd, const char *newroot, const char *at)
{
	char dst[PATH_MAX], src[64];
	struct stat st;
	if (snprintf(dst, sizeof dst, "%s%s", newroot, at) >= (int)sizeof dst)
		nat_child_fail("mounts", ENAMETOOLONG, "%s", at);
	if (fstat(fd, &st) != 0)
		nat_child_fail("mounts", errno, "stat what goes at %s", at);
	nat_mkdirs_for(dst);
	/* the mount point: a directory, or an empty file for a file */
	if (S_ISDIR(st.st_mode)) {
		if (mkdir(dst, 0755) != 0 && errno != EEXIST)
			nat_child_fail("mounts", errno, "mkdir %s", dst);
	} else {
		int mp = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
		if (mp < 0)
			nat_child_fail("mounts", errno, "create %s", dst);
		close(mp);
	}
	snprintf(src, sizeof src, "/proc/self/fd/%d", fd);
	nat_bind(src, dst, false);
	close(fd);
}
