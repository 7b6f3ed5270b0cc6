/* The command: the last process set up, in the order bubblewrap, crun and
 * nsjail use. Every step that can fail is reported to the caller; what was
 * applied is verified from here and reported just before execve. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "core/exit_status.h"
#include "sandbox/native/native.h"

noreturn void nat_command_main(struct nat_plan *p)
{
	static struct nat_msg m;
	memset(&m, 0, sizeof m);
	struct nat_ready *r = &m.ready;
	/* Dies with init (after the uid change; the parent must still be it). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		nat_child_fail("command", errno, "prctl(PR_SET_PDEATHSIG)");
	if (getppid() != 1)
		_exit(SB_EXIT_SANDBOX);
	/* A new session without a controlling terminal: the code cannot use
	 * TIOCSTI on the caller's terminal to inject keystrokes. */
	r->setsid = setsid() >= 0;
	if (!r->setsid)
		nat_child_fail("command", errno, "setsid");
	if (nat_apply_rlimits(p) != 0)
		nat_child_fail("rlimits", errno, "setrlimit");
	r->rlimit_data = p->rlimit_mem;
	r->rlimit_nproc = p->rlimit_pids;
	/* Only stdin/stdout/stderr, the report pipe (CLOEXEC) and the jobs'
	 * cgroup (for the command; see cgroup.c JOB_CGROUP) remain: nothing
	 * else of init or the caller reaches the code. */
	int first_closed = NAT_FD_REPORT + 1;
	if (p->job_cg_fd >= 0) {
		if (dup2(p->job_cg_fd, NAT_CMD_FD_JOB_CGROUP) != NAT_CMD_FD_JOB_CGROUP)
			nat_child_fail("cgroup", errno, "cannot pass the jobs' cgroup to the command");
		first_closed = NAT_CMD_FD_JOB_CGROUP + 1;
	}
	/* A session's job cgroups (job_slots.c), for its controller. In
	 * ascending order: each target is below its source, and every source
	 * it may overwrite was copied already. */
	for (unsigned i = 0; i < p->n_job_slot_fds; i++) {
		int to = NAT_CMD_FD_JOB_SLOTS + (int)i;
		if (dup2(p->job_slot_fds[i], to) != to)
			nat_child_fail("cgroup", errno, "cannot pass the jobs' cgroups to the command");
		first_closed = to + 1;
	}
	if (close_range((unsigned)first_closed, ~0U, 0) != 0)
		for (int fd = first_closed; fd < 65536; fd++)
			close(fd);
	/* No capabilities: no mount, no raw sockets, no overriding file
	 * permissions, even inside the namespaces. */
	if (nat_drop_caps() != 0)
		nat_child_fail("capabilities", errno, "cannot drop capabilities");
	/* no_new_privs: setuid/setgid binaries and file capabilities do not
	 * elevate on execve. Also required for Landlock and seccomp. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		nat_child_fail("no_new_privs", errno, "prctl(PR_SET_NO_NEW_PRIVS)");
	if (p->landlock_abi > 0) {
		r->landlock_abi = nat_landlock_apply(p->landlock_abi, p);
		if (r->landlock_abi < 0)
			nat_child_fail("landlock", errno, "cannot apply the Landlock ruleset (ABI %d)", p->landlock_abi);
		r->landlock_net = r->landlock_abi >= 4;
		r->landlock_scoped = r->landlock_abi >= 6;
	}
	/* seccomp last, so the setup above could use what it forbids. */
	if (nat_seccomp_load(p->seccomp) != 0)
		nat_child_fail("seccomp", errno, "cannot load the seccomp filter");

	/* Verify from here what the kernel now enforces on us. */
	r->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2;
	r->no_new_privs = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
	r->caps_none = nat_caps_none();
	r->bounding_empty = nat_bounding_empty();
	r->loopback_up = p->loopback_up;
	r->uid_inside = (int)getuid();
	r->gid_inside = (int)getgid();
	r->host_uid = (long)p->host_uid;
	r->user_resources = p->user_resources;
	if (!r->seccomp || !r->no_new_privs || !r->caps_none || !r->bounding_empty ||
	    r->uid_inside != NAT_UID_INSIDE)
		nat_child_fail("verify", 0, "verification failed: seccomp=%d no_new_privs=%d caps_none=%d "
					    "bounding_empty=%d uid=%d",
			       r->seccomp, r->no_new_privs, r->caps_none, r->bounding_empty, r->uid_inside);
	m.kind = NAT_MSG_READY;
	nat_report(NAT_FD_REPORT, &m);
	/* Exactly the allow-listed environment: no host secret passes. */
	execve(p->argv[0], (char *const *)p->argv, (char *const *)p->envp);
	nat_child_fail("exec", errno, "cannot execute %s in the sandbox", p->argv[0]);
}
