/* The native backend, caller side: prepare everything (user, seccomp
 * program, cgroup, pipes) while allocation and NSS are still safe, fork the
 * outer process, and wait for the command's verified READY or an error. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/backends.h"
#include "sandbox/native/native.h"
#include "sandbox/sandbox_user.h"
#include "util/fd.h"

#define SETUP_TIMEOUT_MS 60000

struct nat_priv {
	struct nat_plan plan;
	int ctl_fd;    /* our end of the control socket: 'K' = kill */
	int status_fd; /* init's exit record arrives here */
	int job_cg_fd; /* the jobs' cgroup.procs, for the command (see cgroup.c JOB_CGROUP) */
	int job_slot_fds[NAT_JOB_SLOTS_MAX]; /* a session's job cgroups (job_slots.c) */
	unsigned n_job_slot_fds;
	char slots_env[64];
	const char *env[48]; /* sb_sandbox_env() and, with a job cgroup, its fd's name */
	bool reaped;
	int outer_status;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void close_slots(struct nat_priv *np)
{
	for (unsigned i = 0; i < np->n_job_slot_fds; i++)
		close_fd(&np->job_slot_fds[i]);
	np->n_job_slot_fds = 0;
}

static void free_priv(struct nat_priv *np)
{
	close_fd(&np->ctl_fd);
	close_fd(&np->status_fd);
	close_fd(&np->job_cg_fd);
	close_slots(np);
	nat_cgroup_remove(&np->plan.cg);
	free(np);
}

/* Read the setup records until EOF (the command's execve closed the last
 * copy of the pipe). Returns 0 with *ready filled, or -1 with err. */
static int collect_reports(int fd, struct nat_ready *ready, struct sb_error *err)
{
	struct nat_msg m;
	size_t have = 0;
	bool got_ready = false, got_error = false;
	for (;;) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int n = poll(&pf, 1, SETUP_TIMEOUT_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			return sb_fail(err, "the native sandbox did not finish its setup within %d s",
				       SETUP_TIMEOUT_MS / 1000);
		ssize_t r = read(fd, (char *)&m + have, sizeof m - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		if (have < sizeof m)
			continue;
		have = 0;
		if (m.kind == NAT_MSG_ERROR && !got_error) {
			got_error = true;
			sb_fail(err, "native sandbox setup failed (%s): %s", m.stage, m.msg);
			if (err)
				err->errnum = m.errnum;
			if (m.hint[0])
				sb_hint(err, "%s", m.hint);
			if (strcmp(m.stage, "userns") == 0 && err) {
				char why[512], hint[512];
				if (nat_userns_diagnose(m.errnum, why, sizeof why, hint, sizeof hint)) {
					size_t l = strlen(err->msg);
					snprintf(err->msg + l, sizeof err->msg - l, ": %s", why);
					sb_hint(err, "%s", hint);
				} else {
					sb_hint(err, "check that this kernel allows user namespaces "
						     "(`unshare -U true` as this user), or use --backend podman");
				}
			}
		} else if (m.kind == NAT_MSG_READY) {
			got_ready = true;
			*ready = m.ready;
		}
	}
	if (got_error)
		return -1;
	if (!got_ready)
		return sb_fail(err, "the native sandbox's setup process died before starting the command");
	return 0;
}

static int make_pipes(int fds[5][2], int ctl[2], struct sb_error *err)
{
	for (int i = 0; i < 5; i++)
		fds[i][0] = fds[i][1] = -1;
	ctl[0] = ctl[1] = -1;
	for (int i = 0; i < 5; i++)
		if (pipe2(fds[i], O_CLOEXEC) != 0)
			return sb_fail_errno(err, "pipe");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) != 0)
		return sb_fail_errno(err, "socketpair");
	return 0;
}

/* The command's environment: sb_sandbox_env() (its PATH led by the bin
 * dirs of a Sage outside /usr: nat_add_path), the proxy variables with
 * network, and with a job cgroup the
 * fd the command moves each job into (opened here, as the caller: the
 * kernel checks the move against the opener's rights). */
static int set_env(const struct nat_self *ns, struct nat_priv *np, unsigned req_slots, bool net,
		   struct sb_error *err)
{
	struct nat_plan *p = &np->plan;
	const char *const *base = sb_sandbox_env();
	size_t n = 0;
	while (base[n] && n + 4 < sizeof np->env / sizeof np->env[0]) {
		np->env[n] = ns->path_env[0] && !strncmp(base[n], "PATH=", 5) ? ns->path_env : base[n];
		n++;
	}
	if (p->cg.cpu_per_job) {
		np->job_cg_fd = nat_cgroup_open_job(&p->cg);
		if (np->job_cg_fd < 0)
			return sb_fail_errno(err, "cannot open %s/%s", p->cg.job, nat_cgroup_job_file(&p->cg));
		np->env[n++] = NAT_JOB_CGROUP_ENV;
	}
	/* Best effort: without them the controller tracks jobs by process tree. */
	unsigned slots = req_slots < NAT_JOB_SLOTS_MAX ? req_slots : NAT_JOB_SLOTS_MAX - 1;
	if (slots && nat_job_slots_open(&p->cg, slots, np->job_slot_fds) == 0) {
		np->n_job_slot_fds = slots + 1;
		snprintf(np->slots_env, sizeof np->slots_env, NAT_JOB_SLOTS_ENV "%d,%u", NAT_CMD_FD_JOB_SLOTS, slots);
		np->env[n++] = np->slots_env;
	}
	if (p->driver_code)
		np->env[n++] = SB_DRIVER_CODE_ENV "=" SB_DRIVER_CODE_MOUNT;
	/* network set: the proxy variables (sb_sandbox_proxy_env). */
	for (const char *const *e = sb_sandbox_proxy_env(); net && *e; e++) {
		if (n + 1 >= sizeof np->env / sizeof np->env[0])
			return sb_fail(err, "native sandbox: too many environment variables");
		np->env[n++] = *e;
	}
	np->env[n] = NULL;
	p->envp = np->env;
	return 0;
}

static void *native_open(const struct sb_backend_settings *s, struct sb_error *err)
{
	struct nat_self *ns = calloc(1, sizeof *ns);
	if (!ns) {
		sb_fail(err, "out of memory");
		return NULL;
	}
	ns->limits = s->limits;
	snprintf(ns->sandbox_user, sizeof ns->sandbox_user, "%s", s->sandbox_user ? s->sandbox_user : "");
	for (unsigned i = 0; i < s->n_shares && i < SB_SHARES_MAX; i++)
		snprintf(ns->shares[ns->n_shares++], PATH_MAX, "%s", s->shares[i]);
	snprintf(ns->packages, sizeof ns->packages, "%s", s->packages);
	for (size_t i = 0; i < sizeof ns->commands / sizeof ns->commands[0] && s->commands[i].name; i++) {
		snprintf(ns->commands[i].name, sizeof ns->commands[i].name, "%s", s->commands[i].name);
		snprintf(ns->commands[i].path, sizeof ns->commands[i].path, "%s", s->commands[i].path);
	}
	return ns;
}

static void native_close(void *self)
{
	free(self);
}

static int native_spawn(void *self, const struct sb_sandbox_req *req, struct sb_sandbox *sb, struct sb_error *err)
{
	const struct nat_self *ns = self;
	sb->pid = -1;
	sb->stdin_fd = sb->stdout_fd = sb->stderr_fd = -1;
	sb->enforced = NULL;
	sb->priv = NULL;
	if (!req->argv || !req->argv[0] || req->argv[0][0] != '/')
		return sb_fail(err, "native sandbox: the command must be an absolute path");
	struct nat_priv *np = calloc(1, sizeof *np);
	if (!np)
		return sb_fail(err, "out of memory");
	np->ctl_fd = np->status_fd = np->job_cg_fd = -1;
	struct nat_plan *p = &np->plan;
	p->argv = req->argv;
	p->limits = req->limits ? *req->limits : ns->limits;
	p->lifetime_s = req->lifetime_s;
	p->workspace_bytes = req->workspace_bytes;
	p->project_dir = req->workspace_bytes ? req->project_dir : NULL;
	p->project_exec = req->project_exec;
	p->shares = ns->shares;
	p->n_shares = ns->n_shares;
	p->installs = ns->installs;
	p->n_installs = ns->n_installs;
	p->packages = ns->packages;
	p->caller_pid = getpid();
	p->drop_root = geteuid() == 0;
	if (p->drop_root) {
		if (sb_sandbox_user_resolve(ns->sandbox_user, &p->host_uid, &p->host_gid, err) != 0)
			goto fail;
	} else {
		p->host_uid = geteuid();
		p->host_gid = getegid();
	}
	if (!(p->seccomp = nat_seccomp_program(err)))
		goto fail;
	p->landlock_abi = nat_landlock_abi();
	struct sb_error cgerr = {0};
	if (nat_cgroup_create(&p->limits, req->cpu_per_job, &p->cg, &cgerr) != 0) {
		/* Fall back to rlimits, and say so in `enforced`. */
		p->cg.mode = NAT_CG_NONE;
		size_t n = strnlen(cgerr.msg, sizeof p->cg.note - 1);
		memcpy(p->cg.note, cgerr.msg, n);
		p->cg.note[n] = '\0';
	}
	p->net_dir = req->net_dir;
	p->driver_code = req->driver_code;
	if (set_env(ns, np, req->job_slots, req->net_dir != NULL, err) != 0)
		goto fail;
	p->rlimit_mem = !p->cg.mem_limited;
	p->rlimit_pids = !p->cg.pids_limited;

	int fds[5][2], ctl[2];
	enum { IN, OUT, ERR, REPORT, STATUS };
	if (make_pipes(fds, ctl, err) != 0)
		goto fail_fds;
	p->in_fd = fds[IN][0];
	p->out_fd = fds[OUT][1];
	p->err_fd = fds[ERR][1];
	p->report_fd = fds[REPORT][1];
	p->status_fd = fds[STATUS][1];
	p->ctl_fd = ctl[1];
	p->job_cg_fd = np->job_cg_fd;
	memcpy(p->job_slot_fds, np->job_slot_fds, sizeof p->job_slot_fds);
	p->n_job_slot_fds = np->n_job_slot_fds;

	/* Signals blocked across fork: no handler of the caller may run in
	 * the child before it resets them. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid_t pid = fork();
	if (pid == 0)
		nat_outer_main(p);
	int fork_errno = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close_fd(&fds[IN][0]);
	close_fd(&fds[OUT][1]);
	close_fd(&fds[ERR][1]);
	close_fd(&fds[REPORT][1]);
	close_fd(&fds[STATUS][1]);
	close_fd(&ctl[1]);
	close_fd(&np->job_cg_fd); /* only the sandbox holds it now */
	close_slots(np);
	if (pid < 0) {
		errno = fork_errno;
		sb_fail_errno(err, "fork");
		goto fail_fds;
	}
	np->ctl_fd = ctl[0];
	np->status_fd = fds[STATUS][0];
	struct nat_ready ready;
	memset(&ready, 0, sizeof ready);
	int rc = collect_reports(fds[REPORT][0], &ready, err);
	close_fd(&fds[REPORT][0]);
	/* Every limit claimed still holds, on the cgroup its processes are in. */
	if (rc == 0)
		rc = nat_cgroup_verify(&p->cg, &p->limits, err);
	if (rc != 0) {
		kill(pid, SIGKILL);
		SB_RETRY_EINTR(waitpid(pid, NULL, 0));
		close_fd(&fds[IN][1]);
		close_fd(&fds[OUT][0]);
		close_fd(&fds[ERR][0]);
		free_priv(np);
		return -1;
	}
	sb->pid = pid;
	sb->stdin_fd = fds[IN][1];
	sb->stdout_fd = fds[OUT][0];
	sb->stderr_fd = fds[ERR][0];
	sb->enforced = nat_enforced_json(p, &ready);
	sb->priv = np;
	return 0;

fail_fds:
	for (int i = 0; i < 5; i++) {
		close_fd(&fds[i][0]);
		close_fd(&fds[i][1]);
	}
	close_fd(&ctl[0]);
	close_fd(&ctl[1]);
	np->ctl_fd = np->status_fd = -1;
fail:
	free_priv(np);
	return -1;
}

static void native_kill(struct sb_sandbox *sb)
{
	struct nat_priv *np = sb->priv;
	if (!np)
		return;
	/* The outer process SIGKILLs init, which takes the whole pid namespace
	 * with it; cgroup.kill too where there is one (v2). */
	if (np->ctl_fd >= 0) {
		char c = 'K';
		ssize_t w = send(np->ctl_fd, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		(void)w;
	}
	nat_cgroup_kill(&np->plan.cg);
}

static int native_wait(struct sb_sandbox *sb, struct sb_exit *ex, struct sb_error *err)
{
	struct nat_priv *np = sb->priv;
	ex->exit_code = -1;
	ex->signal = 0;
	if (!np)
		return sb_fail(err, "native sandbox: wait() without a running sandbox");
	int st = 0;
	pid_t w = SB_RETRY_EINTR(waitpid(sb->pid, &st, 0));
	if (w < 0) {
		int e = errno;
		free_priv(np);
		sb->priv = NULL;
		errno = e;
		return sb_fail_errno(err, "waitpid");
	}
	/* The outer process exits only after init was reaped, and init only
	 * after every process of its namespace is gone. */
	struct nat_msg m;
	size_t have = 0;
	ssize_t r;
	while (have < sizeof m && (r = SB_RETRY_EINTR(read(np->status_fd, (char *)&m + have, sizeof m - have))) > 0)
		have += (size_t)r;
	if (have == sizeof m && m.kind == NAT_MSG_EXIT) {
		ex->exit_code = m.exit_code;
		ex->signal = m.signal;
	} else {
		/* No status: the sandbox was killed before the command ended. */
		ex->exit_code = -1;
		ex->signal = SIGKILL;
	}
	free_priv(np);
	sb->priv = NULL;
	return 0;
}

static long native_oom_kills(const struct sb_sandbox *sb)
{
	const struct nat_priv *np = sb->priv;
	return np ? nat_cgroup_oom_kills(&np->plan.cg) : -1;
}

const struct sb_backend_ops sb_native_ops = {
	.open = native_open,
	.close = native_close,
	.status = nat_status,
	.spawn = native_spawn,
	.kill = native_kill,
	.wait = native_wait,
	.oom_kills = native_oom_kills,
	.bind_install = nat_bind_install,
	.add_path = nat_add_path,
};
