/* The outer process: forked from the (multi-threaded) caller, it is the
 * only host-side process of the sandbox. It gives up host root, creates the
 * namespaces, forks init into them, and then only relays: a kill request
 * (or the caller's death, seen as EOF) becomes SIGKILL to init. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/exit_status.h"
#include "sandbox/native/native.h"
#include "sandbox/sandbox_user.h"
#include "util/fd.h"

/* Put the child's descriptors on fixed slots and close everything else the
 * caller had open (other jobs' pipes, the server's sockets). */
static void arrange_fds(struct nat_plan *p)
{
	int src[NAT_FD_JOB_SLOTS + NAT_JOB_SLOTS_MAX] = {p->in_fd,     p->out_fd, p->err_fd,   p->report_fd,
							 p->status_fd, p->ctl_fd, p->job_cg_fd};
	int n = NAT_FD_JOB_SLOTS;
	for (unsigned i = 0; i < p->n_job_slot_fds; i++)
		src[n++] = p->job_slot_fds[i];
	int high[NAT_FD_JOB_SLOTS + NAT_JOB_SLOTS_MAX];
	for (int i = 0; i < n; i++) {
		high[i] = src[i] < 0 ? -1 : fcntl(src[i], F_DUPFD_CLOEXEC, 64);
		if (src[i] >= 0 && high[i] < 0)
			_exit(SB_EXIT_SANDBOX); /* cannot even report: the caller sees EOF */
	}
	for (int i = 0; i < n; i++)
		if (high[i] >= 0 && dup3(high[i], i, i >= NAT_FD_REPORT ? O_CLOEXEC : 0) < 0)
			_exit(SB_EXIT_SANDBOX);
	/* Every other fd is gone: the code can never reach the caller's. */
	if (close_range((unsigned)n, ~0U, 0) != 0)
		for (int fd = n; fd < 65536; fd++)
			close(fd);
	if (p->job_cg_fd < 0)
		close(NAT_FD_JOB_CGROUP); /* (the number stays free) */
	p->in_fd = 0, p->out_fd = 1, p->err_fd = 2;
	p->report_fd = NAT_FD_REPORT, p->status_fd = NAT_FD_STATUS, p->ctl_fd = NAT_FD_CTL;
	if (p->job_cg_fd >= 0)
		p->job_cg_fd = NAT_FD_JOB_CGROUP;
	for (unsigned i = 0; i < p->n_job_slot_fds; i++)
		p->job_slot_fds[i] = NAT_FD_JOB_SLOTS + (int)i;
}

static void reset_signals(void)
{
	/* The caller's handlers and ignored signals must not leak into the
	 * sandbox (an ignored SIGPIPE would survive execve). */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (int s = 1; s < _NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &sa, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static noreturn void fail_userns(int errnum, const char *step)
{
	/* Only raw formatting here; the caller adds the sysctl diagnosis. */
	nat_child_fail("userns", errnum, "cannot create a user namespace (%s)", step);
}

/* Milliseconds until the lifetime deadline (poll's timeout), -1: none. */
static int until(const struct timespec *deadline)
{
	if (!deadline->tv_sec)
		return -1;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long long ms = (deadline->tv_sec - now.tv_sec) * 1000LL + (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms <= 0 ? 0 : ms > 1000000 ? 1000000 : (int)ms;
}

static noreturn void relay(pid_t init, unsigned lifetime_s)
{
	/* The sandbox ends when its caller asks or goes (below), never on a
	 * signal meant for a whole group: a unit's stop (a reboot, a logout,
	 * `systemctl stop`) sends SIGTERM to every process of its cgroup at
	 * once, and the caller must still be able to save a session's state
	 * from the sandbox before it ends it. (Nothing is exec'd from here.) */
	const int group_signals[] = {SIGTERM, SIGINT, SIGHUP};
	for (size_t i = 0; i < sizeof group_signals / sizeof *group_signals; i++)
		signal(group_signals[i], SIG_IGN);
	/* stdio to /dev/null: only the sandbox holds the pipes now, so the
	 * caller sees EOF exactly when the sandbox is gone. */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	close(NAT_FD_REPORT);
	close(NAT_FD_STATUS);
	/* The backstop: the sandbox never outlives its purpose, even when
	 * the caller is stuck and does not kill it. */
	struct timespec deadline = {0, 0};
	if (lifetime_s) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += lifetime_s;
	}
	int pidfd = (int)syscall(SYS_pidfd_open, init, 0);
	for (;;) {
		struct pollfd pf[2] = {{.fd = NAT_FD_CTL, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
		int wait_ms = until(&deadline);
		if (pidfd < 0 && (wait_ms < 0 || wait_ms > 100))
			wait_ms = 100;
		int n = poll(pf, pidfd >= 0 ? 2 : 1, wait_ms);
		if (n < 0 && errno != EINTR)
			break;
		if (n == 0 && until(&deadline) == 0) {
			kill(init, SIGKILL);
			break;
		}
		if (n > 0 && (pf[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			char c;
			ssize_t r = recv(NAT_FD_CTL, &c, 1, MSG_DONTWAIT);
			if (r <= 0 || c == 'K') {
				/* Kill request or the caller died: SIGKILL to pid 1
				 * kills every process of the pid namespace. init is
				 * our unreaped child: its pid cannot be reused. */
				kill(init, SIGKILL);
				break;
			}
		}
		int st;
		pid_t w = waitpid(init, &st, WNOHANG);
		if (w == init)
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
	int st = 0;
	SB_RETRY_EINTR(waitpid(init, &st, 0));
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

noreturn void nat_outer_main(struct nat_plan *p)
{
	reset_signals();
	arrange_fds(p);
	/* Into the sandbox's cgroup while still allowed to (root, or the
	 * delegated owner); the limits then hold for everything it forks. */
	if (nat_cgroup_join_self(&p->cg) != 0)
		nat_child_fail("cgroup", errno, "cannot join the sandbox cgroup %s", p->cg.mem);
	/* Host root must never reach the sandbox: become an unprivileged uid
	 * before any namespace exists, so no id mapping can give the code
	 * root's access to host files. */
	if (p->drop_root && sb_sandbox_user_become(p->host_uid, p->host_gid) != 0)
		nat_child_fail("identity", errno, "cannot drop from root to uid %u", (unsigned)p->host_uid);
	/* The caller may have died between fork and here: then stop. */
	if (getppid() != p->caller_pid)
		_exit(SB_EXIT_SANDBOX);
	const char *step = "";
	if (nat_userns_enter(p->host_uid, p->host_gid, &step) != 0)
		fail_userns(errno, step);
	/* Mount, pid, network (loopback only), IPC (no host SysV/POSIX
	 * queues), UTS (own hostname), cgroup (own cgroup view). */
	if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP) != 0)
		nat_child_fail("namespaces", errno, "cannot create the mount/pid/net/ipc/uts/cgroup namespaces");
	/* The sandbox's own share of what is counted per host user, so that
	 * no job can starve other sandboxes or the user's own programs. */
	const char *which = "";
	if (nat_limit_user_resources(&p->user_resources, &which) != 0)
		nat_child_fail("limits", errno, "cannot set the sandbox's limit %s", which);
	int alive[2];
	if (pipe2(alive, O_CLOEXEC) != 0)
		nat_child_fail("namespaces", errno, "pipe");
	pid_t init = fork();
	if (init < 0)
		nat_child_fail("namespaces", errno, "cannot fork init into the new pid namespace");
	if (init == 0) {
		close(alive[1]);
		nat_init_main(p, alive[0]);
	}
	close(alive[0]);
	relay(init, p->lifetime_s); /* alive[1] stays open until we exit */
}
