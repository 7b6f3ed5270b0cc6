/* init: pid 1 of the sandbox's pid namespace. A forked process, not an
 * exec'd one: it builds the root filesystem, forks the command, reaps every
 * orphan, and when the command exits reports its status and exits; the
 * kernel then SIGKILLs whatever is left in the namespace (a setsid'd,
 * double-forked daemon included). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/exit_status.h"
#include "sandbox/native/native.h"
#include "util/procstat.h"

static noreturn void reap(pid_t cmd)
{
	static struct nat_msg m;
	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, 0);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			_exit(SB_EXIT_SANDBOX); /* ECHILD: the command is gone without a status */
		}
		if (w != cmd)
			continue; /* an orphan reparented to us: reaped, no zombie */
		memset(&m, 0, sizeof m);
		m.kind = NAT_MSG_EXIT;
		if (WIFEXITED(st)) {
			m.exit_code = WEXITSTATUS(st);
		} else {
			m.exit_code = -1;
			m.signal = WTERMSIG(st);
		}
		nat_report(NAT_FD_STATUS, &m);
		_exit(0);
	}
}

/* init is a forked copy of the caller, so /proc/1/cmdline would show the
 * caller's command line (paths, options) to the code. Blank our copy of it
 * (copy-on-write: the caller's is untouched). arg_start/arg_end are fields
 * 48 and 49 of /proc/self/stat. */
static void hide_cmdline(void)
{
	unsigned long long f[2];
	if (sb_proc_stat_fields(0, SB_STAT_ARG_START, 2, f))
		return;
	unsigned long long start = f[0], end = f[1];
	static const char name[] = "sagebox-init";
	if (!start || end <= start + sizeof name || end - start > (1u << 20))
		return;
	memset((void *)(uintptr_t)start, 0, (size_t)(end - start));
	memcpy((void *)(uintptr_t)start, name, sizeof name);
}

noreturn void nat_init_main(struct nat_plan *p, int alive_fd)
{
	/* If the outer process dies, so do we (and with us the namespace).
	 * getppid() is 0 across the pid namespace boundary, so check with the
	 * pipe the outer process holds instead. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		nat_child_fail("init", errno, "prctl(PR_SET_PDEATHSIG)");
	struct pollfd pf = {.fd = alive_fd, .events = POLLIN};
	if (poll(&pf, 1, 0) > 0 && (pf.revents & (POLLHUP | POLLERR)))
		_exit(SB_EXIT_SANDBOX);
	close(alive_fd);
	if (getpid() != 1)
		nat_child_fail("init", 0, "init is not pid 1 of a new pid namespace");
	hide_cmdline();

	/* 022, never the caller's umask: a user's 077, or a mask a thread of
	 * the caller had set when we were cloned, would make the root's
	 * directories 0700 or worse. The command keeps it, as in a container:
	 * its files stay inside (files_get copies them out under ours), and
	 * the driver's own directories must be enterable. */
	umask(022);
	nat_build_root(p);
	/* Loopback only: the new network namespace has no other interface,
	 * so nothing outside (internet, host services, cloud metadata) is
	 * reachable. */
	p->loopback_up = nat_loopback_up() == 0;
	if (!p->loopback_up)
		nat_child_fail("network", errno, "cannot bring up lo in the new network namespace");
	/* UTS: our own hostname, the host's is not revealed. */
	if (sethostname(NAT_HOSTNAME, sizeof NAT_HOSTNAME - 1) != 0)
		nat_child_fail("uts", errno, "sethostname");

	pid_t cmd = fork();
	if (cmd < 0)
		nat_child_fail("init", errno, "cannot fork the command");
	if (cmd == 0)
		nat_command_main(p);

	/* From here init only reaps: drop what it no longer needs. */
	close(NAT_FD_REPORT);
	close(NAT_FD_CTL);
	if (p->job_cg_fd >= 0)
		close(p->job_cg_fd);
	for (unsigned i = 0; i < p->n_job_slot_fds; i++)
		close(p->job_slot_fds[i]);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	if (null > 2)
		close(null);
	/* init's capabilities are those of the whole namespace: give them up;
	 * it must never be a stepping stone for the code. */
	nat_drop_caps();
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	reap(cmd);
}
