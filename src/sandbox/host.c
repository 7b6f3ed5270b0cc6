/* The host backend: NO isolation. The code runs as the calling user on the
 * host, in its own process group with rlimits and a scratch directory, as
 * the host execution policy seed does. Never chosen automatically; the CLI
 * warns whenever it is used. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/exit_status.h"
#include "sandbox/backends.h"
#include "util/fd.h"

#define SB_HOST_AS_EXTRA (2ull << 30)

/* The instance: what status reports. */
struct host_self {
	struct sb_limits limits;
	char python[PATH_MAX];
};

struct host_priv {
	char dir[64]; /* scratch directory, removed in wait() */
	bool reaped;
};

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
	envp[n] = NULL;

	int in[2], out[2], er[2];
	if (sb_pipe(in)) {
		free(hp);
		return sb_fail_errno(err, "pipe");
	}
	if (sb_pipe(out)) {
		close(in[0]), close(in[1]), free(hp);
		return sb_fail_errno(err, "pipe");
	}
	if (sb_pipe(er)) {
		close(in[0]), close(in[1]), close(out[0]), close(out[1]), free(hp);
		return sb_fail_errno(err, "pipe");
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
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
		setsid(); /* own session and group: the kill reaches its children */
		if (chdir(hp->dir))
			_exit(SB_EXIT_SANDBOX);
		/* DATA bounds ordinary allocations at the limit; AS (all mappings,
		 * shared ones too) gets room for Sage's libraries on top. */
		setlim(RLIMIT_DATA, req->limits->memory_bytes);
		setlim(RLIMIT_AS, req->limits->memory_bytes + SB_HOST_AS_EXTRA);
		setlim(RLIMIT_NPROC, req->limits->pids);
		setlim(RLIMIT_NOFILE, req->limits->nofile);
		setlim(RLIMIT_FSIZE, req->limits->fsize_bytes);
		setlim(RLIMIT_CORE, 0);
		closefrom(3);
		execve(req->argv[0], (char *const *)req->argv, (char *const *)envp);
		dprintf(2, "sagebox: cannot execute %s: %s\n", req->argv[0], strerror(errno));
		_exit(127);
	}
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
	if (sb->pid > 0 && hp && !hp->reaped)
		kill(-sb->pid, SIGKILL); /* the group: setsid in it escapes, as the seed admits */
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
	pid_t r;
	do
		r = waitpid(sb->pid, &st, 0);
	while (r < 0 && errno == EINTR);
	if (hp)
		hp->reaped = true;
	kill(-sb->pid, SIGKILL); /* whatever is left of the group */
	if (hp) {
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
