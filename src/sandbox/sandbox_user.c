#include "sandbox/sandbox_user.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int sb_sandbox_user_resolve(const char *name, uid_t *uid, gid_t *gid, struct sb_error *err)
{
	const char *n = name && *name ? name : "nobody";
	char buf[4096];
	struct passwd pw, *res = NULL;
	char *end;
	errno = 0;
	unsigned long num = strtoul(n, &end, 10);
	if (*n >= '0' && *n <= '9' && *end == '\0' && errno == 0) {
		*uid = (uid_t)num;
		*gid = (gid_t)num;
		if (getpwuid_r(*uid, &pw, buf, sizeof buf, &res) == 0 && res)
			*gid = res->pw_gid;
	} else {
		int rc = getpwnam_r(n, &pw, buf, sizeof buf, &res);
		if (rc != 0 || !res) {
			sb_fail(err, "sandbox user '%s' does not exist (sagebox runs as root and must drop to an "
				     "unprivileged user before creating the sandbox)", n);
			return sb_hint(err, "set sandbox_user (SAGEBOX_SANDBOX_USER, --sandbox-user) to an "
					    "unprivileged user name or uid, e.g. nobody or 65534");
		}
		*uid = res->pw_uid;
		*gid = res->pw_gid;
	}
	if (*uid == 0 || *gid == 0) {
		sb_fail(err, "sandbox user '%s' is root (uid %u, gid %u): the sandbox must never map host root",
			n, (unsigned)*uid, (unsigned)*gid);
		return sb_hint(err, "set sandbox_user to an unprivileged user, e.g. nobody");
	}
	return 0;
}

int sb_sandbox_user_become(uid_t uid, gid_t gid)
{
	/* Raw system calls: glibc's wrappers would try to signal the caller's
	 * other threads (setxid broadcast), which must not exist. */
	/* Supplementary groups of root (disk, shadow, ...) must not follow us. */
	if (syscall(SYS_setgroups, 0, NULL) != 0)
		return -1;
	if (syscall(SYS_setresgid, gid, gid, gid) != 0)
		return -1;
	/* All three uids: a saved uid of 0 would let the code switch back. */
	if (syscall(SYS_setresuid, uid, uid, uid) != 0)
		return -1;
	uid_t r, e, s;
	if (getresuid(&r, &e, &s) != 0 || r != uid || e != uid || s != uid) {
		errno = EPERM;
		return -1;
	}
	/* Verify the drop is permanent: regaining root must fail. */
	if (syscall(SYS_setresuid, 0, 0, 0) == 0) {
		errno = EPERM;
		return -1;
	}
	return 0;
}
