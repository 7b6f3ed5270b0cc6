/* Identity: leave host root behind, then enter a user namespace that maps
 * exactly one unprivileged host uid. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/native/native.h"
#include "sandbox/sandbox_user.h"
#include "util/fd.h"

int nat_userns_enter(uid_t host_uid, gid_t host_gid, const char **step)
{
	char line[64], num[24];
	/* After a uid change the process is not dumpable and its /proc files
	 * belong to root: make them ours for the three writes below only. */
	*step = "prctl(PR_SET_DUMPABLE)";
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
		return -1;
	*step = "unshare(CLONE_NEWUSER)";
	if (unshare(CLONE_NEWUSER) != 0)
		return -1;
	/* setgroups=deny: without it a process could drop a group that the
	 * host uses in a "deny this group" permission (CVE-2014-8989). */
	*step = "writing /proc/self/setgroups";
	if (nat_write_file("/proc/self/setgroups", "deny") != 0)
		return -1;
	/* One line, our own unprivileged uid: the kernel refuses anything else
	 * from an unprivileged writer, so host root can never be mapped. */
	*step = "writing /proc/self/uid_map";
	nat_fmt_u(num, sizeof num, host_uid);
	snprintf(line, sizeof line, "%d %s 1\n", NAT_UID_INSIDE, num);
	if (nat_write_file("/proc/self/uid_map", line) != 0)
		return -1;
	*step = "writing /proc/self/gid_map";
	nat_fmt_u(num, sizeof num, host_gid);
	snprintf(line, sizeof line, "%d %s 1\n", NAT_GID_INSIDE, num);
	if (nat_write_file("/proc/self/gid_map", line) != 0)
		return -1;
	/* Not dumpable again: other processes of the same host uid (other
	 * sandboxes) must not ptrace or read this host-side process. */
	*step = "prctl(PR_SET_DUMPABLE, 0)";
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		return -1;
	return 0;
}

static long read_sysctl(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long v = -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static bool under_seccomp(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	char line[256];
	bool yes = false;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "Seccomp:", 8) == 0)
			yes = atoi(line + 8) != 0;
	fclose(f);
	return yes;
}

bool nat_userns_diagnose(int errnum, char *msg, size_t msgn, char *hint, size_t hintn)
{
	if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == 0) {
		snprintf(msg, msgn, "unprivileged user namespaces are disabled: "
				    "kernel.unprivileged_userns_clone = 0");
		snprintf(hint, hintn, "enable them: sudo sysctl -w kernel.unprivileged_userns_clone=1 "
				      "(persist in /etc/sysctl.d/90-sagebox.conf)");
		return true;
	}
	if (read_sysctl("/proc/sys/user/max_user_namespaces") == 0) {
		snprintf(msg, msgn, "user namespaces are disabled: user.max_user_namespaces = 0");
		snprintf(hint, hintn, "enable them: sudo sysctl -w user.max_user_namespaces=15000 "
				      "(persist in /etc/sysctl.d/90-sagebox.conf)");
		return true;
	}
	if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1) {
		snprintf(msg, msgn, "AppArmor restricts unprivileged user namespaces "
				    "(kernel.apparmor_restrict_unprivileged_userns = 1, the Ubuntu 24.04 default)");
		snprintf(hint, hintn,
			 "allow sagebox with an AppArmor profile granting 'userns,' (see "
			 "/etc/apparmor.d/bwrap-userns-restrict for an example), or "
			 "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0");
		return true;
	}
	if (errnum == ENOSPC) {
		snprintf(msg, msgn, "the limit on user namespaces is reached (user.max_user_namespaces = %ld)",
			 read_sysctl("/proc/sys/user/max_user_namespaces"));
		snprintf(hint, hintn, "raise it: sudo sysctl -w user.max_user_namespaces=15000");
		return true;
	}
	if (errnum == EUSERS) {
		snprintf(msg, msgn, "user namespaces are nested too deeply (the kernel allows 32 levels)");
		snprintf(hint, hintn, "run sagebox closer to the host, or use --backend podman");
		return true;
	}
	if (errnum == EPERM && under_seccomp()) {
		snprintf(msg, msgn, "creating namespaces is forbidden by a seccomp filter on sagebox itself "
				    "(it probably runs inside a container with the default seccomp profile)");
		snprintf(hint, hintn, "run the container with --security-opt seccomp=unconfined (or a profile "
				      "allowing unshare/clone with CLONE_NEWUSER), or run sagebox on the host");
		return true;
	}
	return false;
}

/* Probe in a throw-away child exactly what spawn does up to the mounts. */
int nat_userns_probe(uid_t uid, gid_t gid, bool drop_root, const char **step)
{
	static const char *const steps[] = {
		"setresuid to the sandbox user", "prctl(PR_SET_DUMPABLE)", "unshare(CLONE_NEWUSER)",
		"writing /proc/self/setgroups", "writing /proc/self/uid_map", "writing /proc/self/gid_map",
		"prctl(PR_SET_DUMPABLE, 0)", "unshare(mount, pid, net, ipc, uts, cgroup namespaces)",
	};
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		*step = "pipe";
		return errno;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		*step = "fork";
		return e;
	}
	if (pid == 0) {
		int res[2] = {0, 0};
		const char *s = NULL;
		if (drop_root && sb_sandbox_user_become(uid, gid) != 0) {
			res[0] = errno;
		} else if (nat_userns_enter(drop_root ? uid : getuid(), drop_root ? gid : getgid(), &s) != 0) {
			res[0] = errno;
			for (int i = 1; i < 7; i++)
				if (strcmp(s, steps[i]) == 0)
					res[1] = i;
		} else if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
				   CLONE_NEWCGROUP) != 0) {
			res[0] = errno;
			res[1] = 7;
		}
		ssize_t w = write(fds[1], res, sizeof res);
		(void)w;
		_exit(0);
	}
	close(fds[1]);
	int res[2] = {ECHILD, 0};
	SB_RETRY_EINTR(read(fds[0], res, sizeof res));
	close(fds[0]);
	SB_RETRY_EINTR(waitpid(pid, NULL, 0));
	*step = steps[res[1] >= 0 && res[1] < 8 ? res[1] : 0];
	return res[0];
}
