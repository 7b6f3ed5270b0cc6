/* The host backend: NO isolation. The code runs as the calling user on the
 * host, in its own process group with rlimits and a scratch directory, as
 * the host execution policy seed does. Never chosen automatically; the CLI
 * warns whenever it is used. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/exit_status.h"
#include "sandbox/backends.h"
#include "util/fd.h"
#include "util/procstat.h"

#define SB_HOST_AS_EXTRA (2ull << 30)

/* The instance: what status reports. */
struct host_self {
	struct sb_limits limits;
	char python[PATH_MAX];
};

struct host_priv {
	char dir[64]; /* scratch directory, removed in wait() */
	int ctl;      /* write end of the keeper's lifeline: closed = kill */
	bool reaped;
};

/* The keeper's descriptor for the lifeline's read end. */
#define HOST_FD_CTL 3

static json_t *host_enforced(const struct sb_limits *l)
{
	bool root = geteuid() == 0;
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:{s:I, s:s?, s:s?}, s:{s:f, s:n, s:s}, s:I, s:I}",
			 "backend", "host", "isolation", "none",
			 "warning", "host backend: the code runs on the host as your user, with your files and network",
			 "network", "host (not isolated)", "filesystem", "host (not isolated)",
			 "memory", "limit", l->memory, "enforced_by",
			 "rlimit DATA (per process; address space capped at the limit + 2 GiB)",
			 "pids", "limit", (json_int_t)l->pids, "enforced_by",
			 root ? NULL : "rlimit NPROC (counts all processes of your user)", "note",
			 root ? "not enforced: root is exempt from RLIMIT_NPROC" : NULL,
			 "cpus", "limit", l->cpus, "enforced_by", "note", "not enforced without a cgroup",
			 "nofile", (json_int_t)l->nofile, "fsize_bytes", (json_int_t)l->fsize_bytes);
}

static void *host_open(const struct sb_backend_settings *s, struct sb_error *err)
{
	struct host_self *h = calloc(1, sizeof *h);
	if (!h) {
		sb_fail(err, "out of memory");
		return NULL;
	}
	h->limits = s->limits;
	for (size_t i = 0; s->commands[i].name; i++)
		if (!strcmp(s->commands[i].name, "python"))
			snprintf(h->python, sizeof h->python, "%s", s->commands[i].path);
	return h;
}

static void host_close(void *self)
{
	free(self);
}

static json_t *host_status(void *self)
{
	struct host_self *h = self;
	json_t *o = json_pack("{s:s, s:b, s:s}", "name", "host", "available", 1, "warning",
			      "no isolation: use only for code you would run yourself");
	json_object_set_new(o, "python_present", json_boolean(h->python[0] && access(h->python, X_OK) == 0));
	json_object_set_new(o, "enforced", host_enforced(&h->limits));
	return o;
}

static void setlim(int res, rlim_t v)
{
	struct rlimit rl = {v, v};
	setrlimit(res, &rl);
}

/* Sends SIGKILL to every process whose parent is `self`; how many. Raw
 * system calls over /proc (after fork: no stdio, no malloc). */
static int kill_children(pid_t self)
{
	int n = 0, dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return 0;
	char buf[4096];
	long got;
	while ((got = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
		for (long off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			pid_t pid = (pid_t)atoi(d->d_name);
			if (pid <= 0 || pid == self)
				continue;
			unsigned long long ppid;
			if (sb_proc_stat_fields(pid, SB_STAT_PPID, 1, &ppid) == 0 &&
			    ppid == (unsigned long long)self && kill(pid, SIGKILL) == 0)
				n++;
		}
	}
	close(dir);
	return n;
}

/* Kills everything below the keeper: it is their subreaper, so what a
 * job detached (setsid, double fork) comes back to it as its parent dies. */
static void kill_descendants(void)
{
	pid_t self = getpid();
	for (;;) {
		kill_children(self);
		if (waitpid(-1, NULL, __WALL) < 0 && errno == ECHILD)
			return;
	}
}

/* Removes parent/name and everything below it, never following a
 * symlink; raw system calls only (the keeper is a fork: no malloc). Depth
 * bounded by the stack it may use: code that nests deeper keeps the rest
 * (in /tmp, for the system's cleaner). 0 when name is gone. */
static int remove_tree(int parent, const char *name, int depth)
{
	if (unlinkat(parent, name, 0) == 0)
		return 0;
	if (errno != EISDIR)
		return -1;
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && depth < 32) {
		char buf[1024];
		long got;
		bool removed = true;
		/* Removing entries while reading the directory may skip some:
		 * read it again from the start until a pass removes nothing. */
		while (removed) {
			removed = false;
			lseek(fd, 0, SEEK_SET);
			while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
				for (long off = 0; off < got;) {
					struct dirent64 *d = (struct dirent64 *)(buf + off);
					off += d->d_reclen;
					if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..") &&
					    remove_tree(fd, d->d_name, depth + 1) == 0)
						removed = true;
				}
		}
	}
	if (fd >= 0)
		close(fd);
	return unlinkat(parent, name, AT_REMOVEDIR);
}

/* sagebox is gone (or the job's lifetime is over): end the job, and remove
 * its scratch directory, which sagebox would have removed after the wait. */
static noreturn void keeper_abandon(const char *dir)
{
	kill_descendants();
	remove_tree(AT_FDCWD, dir, 0);
	_exit(SB_EXIT_SANDBOX);
}

/* The keeper: the first process of the job's group, between sagebox and
 * the code. It stops a job from outliving sagebox (a SIGKILLed server
 * cannot kill its jobs; the code would run on as an orphan) and from
 * outliving its lifetime when the caller is stuck: when the lifeline
 * reaches EOF or the deadline passes, it kills the whole group and
 * removes the scratch directory. Runs after fork: raw system calls only. */
static noreturn void host_keeper(pid_t code, unsigned lifetime_s, const char *dir)
{
	/* The keeper holds none of the job's pipes: the caller sees EOF when
	 * the code (and what it left in the group) is done. */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		dup2(null, fd);
	struct timespec now, deadline = {0, 0};
	if (lifetime_s) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += lifetime_s;
	}
	int pidfd = (int)syscall(SYS_pidfd_open, code, 0);
	int st = 0;
	for (;;) {
		int wait_ms = 100;
		if (pidfd >= 0)
			wait_ms = -1;
		if (lifetime_s) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			long long left = (deadline.tv_sec - now.tv_sec) * 1000LL + (deadline.tv_nsec - now.tv_nsec) / 1000000;
			if (left <= 0)
				keeper_abandon(dir);
			if (wait_ms < 0 || left < wait_ms)
				wait_ms = left > 1000000 ? 1000000 : (int)left;
		}
		struct pollfd pf[2] = {{.fd = HOST_FD_CTL, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
		int n = poll(pf, pidfd >= 0 ? 2 : 1, wait_ms);
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && (pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			keeper_abandon(dir); /* sagebox is gone (or killed the job) */
		if (waitpid(code, &st, WNOHANG) == code)
			goto done;
	}
	SB_RETRY_EINTR(waitpid(code, &st, 0));
done:
	kill_descendants(); /* what the code left behind, detached or not */
	/* Report the code's own end: its status, or the same signal. */
	if (WIFSIGNALED(st)) {
		int sig = WTERMSIG(st);
		signal(sig, SIG_DFL);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		struct rlimit no_core = {0, 0};
		setrlimit(RLIMIT_CORE, &no_core);
		kill(getpid(), sig);
		_exit(SB_EXIT_SIGNAL_BASE + sig);
	}
	_exit(WEXITSTATUS(st));
}

static int host_spawn(void *self, const struct sb_sandbox_req *req, struct sb_sandbox *sb, struct sb_error *err)
{
	(void)self;
	struct host_priv *hp = calloc(1, sizeof *hp);
	if (!hp)
		return sb_fail(err, "out of memory");
	snprintf(hp->dir, sizeof hp->dir, "/tmp/sagebox-host-XXXXXX");
	if (!mkdtemp(hp->dir)) {
		free(hp);
		return sb_fail_errno(err, "cannot create a scratch directory in /tmp");
	}
	/* The environment: the sandbox allow-list with the dirs moved into
	 * the scratch directory. Built before fork: no malloc after it. */
	char home[96], dot[96], tmp[96];
	snprintf(home, sizeof home, "HOME=%s/home", hp->dir);
	snprintf(dot, sizeof dot, "DOT_SAGE=%s/dot-sage", hp->dir);
	/* The home must exist, as in a sandbox: Sage's scripts refuse to run
	 * without it (`sage --python`, a shell job's `sage -c`). */
	mkdir(home + 5, 0700);
	snprintf(tmp, sizeof tmp, "TMPDIR=%s", hp->dir);
	const char *envp[32];
	int n = 0;
	for (const char *const *e = sb_sandbox_env(); *e && n < 28; e++) {
		if (!strncmp(*e, "HOME=", 5) || !strncmp(*e, "DOT_SAGE=", 9) || !strncmp(*e, "TMPDIR=", 7))
			continue;
		envp[n++] = *e;
	}
	envp[n++] = home;
	envp[n++] = dot;
	envp[n++] = tmp;
	/* The driver's precompiled code (runner/warm/driver_code.h), by its path. */
	char code_env[PATH_MAX + 32];
	if (req->driver_code && snprintf(code_env, sizeof code_env, SB_DRIVER_CODE_ENV "=%s", req->driver_code) < (int)sizeof code_env)
		envp[n++] = code_env;
	envp[n] = NULL;

	int in[2], out[2], er[2], ctl[2];
	if (sb_pipe(ctl)) {
		free(hp);
		return sb_fail_errno(err, "pipe");
	}
	if (sb_pipe(in)) {
		close(ctl[0]), close(ctl[1]), free(hp);
		return sb_fail_errno(err, "pipe");
	}
	if (sb_pipe(out)) {
		close(ctl[0]), close(ctl[1]), close(in[0]), close(in[1]), free(hp);
		return sb_fail_errno(err, "pipe");
	}
	if (sb_pipe(er)) {
		close(ctl[0]), close(ctl[1]), close(in[0]), close(in[1]), close(out[0]), close(out[1]), free(hp);
		return sb_fail_errno(err, "pipe");
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(ctl[0]), close(ctl[1]);
		close(in[0]), close(in[1]), close(out[0]), close(out[1]), close(er[0]), close(er[1]);
		rmdir(hp->dir);
		free(hp);
		errno = e;
		return sb_fail_errno(err, "fork");
	}
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(er[1], 2);
		dup2(ctl[0], HOST_FD_CTL);
		closefrom(HOST_FD_CTL + 1); /* other jobs' lifelines among them */
		setsid(); /* own session and group: the kill reaches its children */
		/* Orphans of the job (setsid, double fork) become the keeper's
		 * children, so the keeper can find and kill all of them. */
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
		pid_t code = fork();
		if (code < 0)
			_exit(SB_EXIT_SANDBOX);
		if (code > 0)
			host_keeper(code, req->lifetime_s, hp->dir);
		if (chdir(hp->dir))
			_exit(SB_EXIT_SANDBOX);
		/* DATA bounds ordinary allocations at the limit; AS (all mappings,
		 * shared ones too) gets room for Sage's libraries on top. */
		setlim(RLIMIT_DATA, req->limits->memory_bytes);
		setlim(RLIMIT_AS, req->limits->memory_bytes + SB_HOST_AS_EXTRA);
		if (req->limits->pids) /* 0: none (sagebox asking the host's own sage: runner/sage/locate_ask.c) */
			setlim(RLIMIT_NPROC, req->limits->pids);
		setlim(RLIMIT_NOFILE, req->limits->nofile);
		setlim(RLIMIT_FSIZE, req->limits->fsize_bytes);
		setlim(RLIMIT_CORE, 0);
		closefrom(3);
		execve(req->argv[0], (char *const *)req->argv, (char *const *)envp);
		dprintf(2, "sagebox: cannot execute %s: %s\n", req->argv[0], strerror(errno));
		_exit(127);
	}
	close(ctl[0]);
	hp->ctl = ctl[1];
	close(in[0]), close(out[1]), close(er[1]);
	sb->pid = pid;
	sb->stdin_fd = in[1];
	sb->stdout_fd = out[0];
	sb->stderr_fd = er[0];
	sb->priv = hp;
	sb->enforced = host_enforced(req->limits);
	return 0;
}

static void host_kill(struct sb_sandbox *sb)
{
	struct host_priv *hp = sb->priv;
	/* Closing the lifeline makes the keeper kill every process of the
	 * job, also those that left its group (setsid); killing the group
	 * from here would miss those and kill the keeper that finds them. */
	if (sb->pid > 0 && hp && !hp->reaped && hp->ctl >= 0) {
		close(hp->ctl);
		hp->ctl = -1;
	}
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

static int host_wait(struct sb_sandbox *sb, struct sb_exit *ex, struct sb_error *err)
{
	struct host_priv *hp = sb->priv;
	int st;
	pid_t r = SB_RETRY_EINTR(waitpid(sb->pid, &st, 0));
	if (hp)
		hp->reaped = true;
	kill(-sb->pid, SIGKILL); /* whatever is left of the group */
	if (hp) {
		if (hp->ctl >= 0)
			close(hp->ctl);
		nftw(hp->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		free(hp);
		sb->priv = NULL;
	}
	if (r < 0)
		return sb_fail_errno(err, "waitpid");
	ex->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	ex->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	return 0;
}

const struct sb_backend_ops sb_host_ops = {
	.open = host_open,
	.close = host_close,
	.status = host_status,
	.spawn = host_spawn,
	.kill = host_kill,
	.wait = host_wait,
};
