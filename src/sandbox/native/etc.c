/* A synthetic /etc: only what the runtimes need (found by tracing `sage`
 * running factor, maxima, gap and matplotlib), bound read-only one entry at
 * a time; passwd/group/hosts written fresh so no host account, host name or
 * shadow file is ever visible. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/native/native.h"
#include "util/fd.h"

/* Host entries the sandbox may read, if the host has them. The JDK's
 * configuration (Debian links its conf/security/java.security, jvm.cfg, ...
 * here; public policy files) is what Jmol, Sage's 3D viewer and 3D image
 * saver, needs to start: without it, java.lang.InternalError. */
static const char *const etc_binds[] = {
	"alternatives", "ld.so.cache", "ld.so.conf",  "ld.so.conf.d", "localtime", "timezone",
	"os-release",	"mime.types",  "protocols",   "services",     "ssl/certs", "ssl/openssl.cnf",
	"ca-certificates", "fonts",    "matplotlibrc", "python3",     "python3.11", "python3.12",
	"python3.13",	"R",	       "gprc",	       "inputrc",     "terminfo", "magic",
	"magic.mime",	"java-17-openjdk", "java-21-openjdk",
};

static void write_new(const char *dir, const char *name, const char *content)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		nat_child_fail("etc", errno, "create %s", path);
	size_t len = strlen(content);
	ssize_t w = SB_RETRY_EINTR(write(fd, content, len));
	close(fd);
	if (w != (ssize_t)len)
		nat_child_fail("etc", errno, "write %s", path);
}

static void bind_entry(const char *etc, const char *name)
{
	char src[PATH_MAX], dst[PATH_MAX], target[PATH_MAX];
	struct stat st;
	snprintf(src, sizeof src, "/etc/%s", name);
	snprintf(dst, sizeof dst, "%s/%s", etc, name);
	if (lstat(src, &st) != 0)
		return; /* not on this host: fine */
	nat_mkdirs_for(dst);
	if (S_ISLNK(st.st_mode)) {
		/* Keep symlinks as symlinks (localtime -> /usr/share/zoneinfo). */
		ssize_t l = readlink(src, target, sizeof target - 1);
		if (l < 0)
			nat_child_fail("etc", errno, "readlink %s", src);
		target[l] = '\0';
		if (symlink(target, dst) != 0)
			nat_child_fail("etc", errno, "symlink %s", dst);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (mkdir(dst, 0755) != 0)
			nat_child_fail("etc", errno, "mkdir %s", dst);
	} else if (S_ISREG(st.st_mode)) {
		int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			nat_child_fail("etc", errno, "create %s", dst);
		close(fd);
	} else {
		return; /* no devices, sockets or fifos from the host */
	}
	nat_bind(src, dst, false);
}

void nat_make_etc(const char *etc)
{
	if (mkdir(etc, 0755) != 0)
		nat_child_fail("etc", errno, "mkdir %s", etc);
	/* Our own accounts: root is only a name here (host root is not mapped),
	 * the sandbox user is the one mapped uid. No /etc/shadow at all. */
	write_new(etc, "passwd",
		  "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
		  "sandbox:x:1000:1000:sagebox sandbox:/tmp/home:/bin/sh\n"
		  "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
	write_new(etc, "group", "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n");
	write_new(etc, "hosts", "127.0.0.1\tlocalhost " NAT_HOSTNAME "\n::1\tlocalhost ip6-localhost\n");
	write_new(etc, "hostname", NAT_HOSTNAME "\n");
	/* files only: no NSS module (systemd, sss, ldap) talks to a host daemon. */
	write_new(etc, "nsswitch.conf", "passwd: files\ngroup: files\nshadow: files\nhosts: files\n"
					 "networks: files\nprotocols: files\nservices: files\n");
	for (size_t i = 0; i < sizeof etc_binds / sizeof etc_binds[0]; i++)
		bind_entry(etc, etc_binds[i]);
}
