/* A tiny /dev: five harmless devices bound from the host, the usual
 * symlinks, a private devpts for Sage's pexpect interfaces, a small /dev/shm.
 * Nothing else: no disks, no /dev/mem, no host ptys. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/native/native.h"

#define DEV_SHM_MAX (64ull << 20)

static void join(char *out, size_t n, const char *dir, const char *name)
{
	if (snprintf(out, n, "%s/%s", dir, name) >= (int)n)
		nat_child_fail("dev", ENAMETOOLONG, "%s/%s", dir, name);
}

void nat_make_dev(const char *dev, const struct sb_limits *l)
{
	static const char *const nodes[] = {"null", "zero", "full", "random", "urandom"};
	static const char *const links[][2] = {
		{"fd", "/proc/self/fd"},	 {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
		{"stderr", "/proc/self/fd/2"}, {"ptmx", "pts/ptmx"},
	};
	char path[PATH_MAX], src[64], opts[96];
	if (mkdir(dev, 0755) != 0)
		nat_child_fail("dev", errno, "mkdir %s", dev);
	/* nodev on the tmpfs itself: the five binds below are mounts of their
	 * own, and only they keep device access. */
	if (mount("sagebox-dev", dev, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64") != 0)
		nat_child_fail("dev", errno, "mount tmpfs on /dev");
	for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
		join(path, sizeof path, dev, nodes[i]);
		snprintf(src, sizeof src, "/dev/%s", nodes[i]);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0)
			nat_child_fail("dev", errno, "create %s", path);
		close(fd);
		/* Bound, not created: a user namespace cannot mknod, and a bind
		 * of the host's node opens only that one device. */
		nat_bind(src, path, true);
	}
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
		join(path, sizeof path, dev, links[i][0]);
		if (symlink(links[i][1], path) != 0)
			nat_child_fail("dev", errno, "symlink %s", path);
	}
	join(path, sizeof path, dev, "pts");
	if (mkdir(path, 0755) != 0)
		nat_child_fail("dev", errno, "mkdir %s", path);
	/* A new devpts instance: the code gets ptys (maxima, gap via pexpect)
	 * but can never open the host's terminals. At most 64 of them: all
	 * instances but the host's share kernel.pty.max (4096) less its
	 * reserve (1024), and one job must not take them from the others. */
	if (mount("devpts", path, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620,max=64") != 0)
		nat_child_fail("dev", errno, "mount a private devpts on /dev/pts");
	join(path, sizeof path, dev, "shm");
	if (mkdir(path, 0755) != 0)
		nat_child_fail("dev", errno, "mkdir %s", path);
	unsigned long long shm = l->tmpfs_bytes < DEV_SHM_MAX ? l->tmpfs_bytes : DEV_SHM_MAX;
	snprintf(opts, sizeof opts, "mode=1777,size=%llu,nr_inodes=4096", shm);
	if (mount("sagebox-shm", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
		nat_child_fail("dev", errno, "mount tmpfs on /dev/shm");
	/* /dev itself read-only: no new nodes or files can appear there. */
	if (mount(NULL, dev, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0755,size=64k,nr_inodes=64") != 0)
		nat_child_fail("dev", errno, "remount /dev read-only");
}
