/* Running podman/docker from sagebox: a scrubbed environment, a fresh
 * session, default signal dispositions, no inherited descriptors, and a
 * deadline for helper commands. */
#include "sandbox/podman/podman.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "util/fd.h"

extern char **environ;

#define PM_CAPTURE_MAX (4u << 20)

const char *pm_engine_name(enum pm_engine eng)
{
	return eng == PM_DOCKER ? "docker" : "podman";
}

const char *pm_exe_for(const char *setting, enum pm_engine eng)
{
	if (eng == PM_DOCKER && (!setting || strcmp(setting, "podman") == 0))
		return "docker";
	return setting && setting[0] ? setting : pm_engine_name(eng);
}

/* The seed's allow-list. Stops: API keys, tokens and other secrets of the
 * calling process (an MCP client's environment) reaching podman, its
 * plugins and hooks, or a container through podman's own env handling
 * (--env-host, containers.conf env = [...] with host references). */
static const char *const host_env_keep[] = {
	"PATH", "HOME", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "TMPDIR", NULL,
};
/* Docker finds its daemon only through these; without DOCKER_HOST a
 * rootless Docker (or podman's Docker API socket) is unreachable. None of
 * them holds a secret (DOCKER_CONFIG names a directory). */
static const char *const docker_env_keep[] = {
	"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", NULL,
};

static char *host_env[2][16];
static pthread_once_t host_env_once = PTHREAD_ONCE_INIT;

static void add_kept(char **env, size_t *n, const char *const *keys)
{
	for (size_t i = 0; keys[i]; i++) {
		const char *v = getenv(keys[i]);
		if (!v && strcmp(keys[i], "TMPDIR") == 0)
			v = "/tmp"; /* as the seed */
		if (!v)
			continue;
		size_t len = strlen(keys[i]) + strlen(v) + 2;
		char *s = malloc(len);
		if (!s)
			continue;
		snprintf(s, len, "%s=%s", keys[i], v);
		env[(*n)++] = s;
	}
}

static void host_env_init(void)
{
	for (int e = 0; e < 2; e++) {
		size_t n = 0;
		add_kept(host_env[e], &n, host_env_keep);
		if (e == PM_DOCKER)
			add_kept(host_env[e], &n, docker_env_keep);
		host_env[e][n] = NULL;
	}
}

char *const *pm_host_env(enum pm_engine eng)
{
	pthread_once(&host_env_once, host_env_init);
	return host_env[eng == PM_DOCKER ? 1 : 0];
}

/* Attributes shared by every engine process we start. */
static int spawn_attrs(posix_spawnattr_t *attr)
{
	sigset_t all, none;
	sigfillset(&all);
	sigemptyset(&none);
	if (posix_spawnattr_init(attr) != 0)
		return -1;
	/* Own session: a Ctrl-C at sagebox's terminal reaches sagebox, which
	 * kills and removes the container, instead of podman's signal proxy
	 * racing it. Default dispositions: an ignored SIGPIPE/SIGINT of ours
	 * must not leak into podman. No PR_SET_PDEATHSIG: it fires when the
	 * spawning *thread* exits, which would kill warm workers started from
	 * short-lived threads; orphans are reaped by label instead. */
	posix_spawnattr_setsigdefault(attr, &all);
	posix_spawnattr_setsigmask(attr, &none);
	posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	return 0;
}

static int do_spawn(const char *exe, const char *const *argv, enum pm_engine eng, const int child_fds[3],
		    pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	if (spawn_attrs(&attr) != 0)
		return ENOMEM;
	posix_spawn_file_actions_init(&fa);
	for (int i = 0; i < 3; i++)
		posix_spawn_file_actions_adddup2(&fa, child_fds[i], i);
	/* Stops: descriptors other threads opened without O_CLOEXEC (another
	 * job's pipes, the MCP socket) leaking into podman and the container. */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	int rc = posix_spawnp(pid, exe, &fa, &attr, (char *const *)argv, pm_host_env(eng));
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	return rc;
}

static void close_all(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

int pm_spawn_piped(const char *exe, const char *const *argv, enum pm_engine eng, pid_t *pid, int fds[3],
		   struct sb_error *err)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1};
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0) {
		int all[] = {in[0], in[1], out[0], out[1], er[0], er[1]};
		close_all(all, 6);
		return sb_fail_errno(err, "cannot create pipes for %s", exe);
	}
	int child[3] = {in[0], out[1], er[1]};
	int rc = do_spawn(exe, argv, eng, child, pid);
	close(in[0]);
	close(out[1]);
	close(er[1]);
	if (rc != 0) {
		int mine[] = {in[1], out[0], er[0]};
		close_all(mine, 3);
		errno = rc;
		if (rc == ENOENT) {
			sb_fail(err, "%s executable '%s' not found", pm_engine_name(eng), exe);
			return sb_hint(err, "install it (Debian: apt install %s) or set --podman /path/to/%s",
				       pm_engine_name(eng), pm_engine_name(eng));
		}
		return sb_fail_errno(err, "cannot start '%s'", exe);
	}
	fds[0] = in[1];
	fds[1] = out[0];
	fds[2] = er[0];
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct capbuf {
	char *p;
	size_t len, cap;
};

static void cap_append(struct capbuf *b, const char *data, size_t n)
{
	if (b->len + n > PM_CAPTURE_MAX)
		n = PM_CAPTURE_MAX - b->len;
	if (b->len + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 1024;
		while (nc < b->len + n + 1)
			nc *= 2;
		char *np = realloc(b->p, nc);
		if (!np)
			return;
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static char *cap_finish(struct capbuf *b)
{
	if (!b->p) {
		b->p = strdup("");
		return b->p;
	}
	while (b->len > 0 && (b->p[b->len - 1] == '\n' || b->p[b->len - 1] == ' ' ||
			      b->p[b->len - 1] == '\r' || b->p[b->len - 1] == '\t'))
		b->p[--b->len] = '\0';
	return b->p;
}

int pm_run(const char *exe, const char *const *argv, enum pm_engine eng, int timeout_ms, struct pm_out *o)
{
	memset(o, 0, sizeof *o);
	o->status = -1;
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int out[2] = {-1, -1}, er[2] = {-1, -1};
	if (devnull < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0) {
		o->spawn_errno = errno;
		int all[] = {devnull, out[0], out[1], er[0], er[1]};
		close_all(all, 5);
		o->out = strdup("");
		o->err = strdup("");
		return -1;
	}
	int child[3] = {devnull, out[1], er[1]};
	pid_t pid;
	int rc = do_spawn(exe, argv, eng, child, &pid);
	close(devnull);
	close(out[1]);
	close(er[1]);
	if (rc != 0) {
		o->spawn_errno = rc;
		close(out[0]);
		close(er[0]);
		o->out = strdup("");
		o->err = strdup("");
		return -1;
	}
	struct capbuf cb[2] = {{0}, {0}};
	struct pollfd pfd[2] = {{.fd = out[0], .events = POLLIN}, {.fd = er[0], .events = POLLIN}};
	int64_t deadline = now_ms() + timeout_ms;
	int open_fds = 2;
	while (open_fds > 0) {
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			/* A hung podman (a stuck storage lock, a dead service
			 * socket) must not hang sagebox: kill it. */
			o->timed_out = true;
			kill(pid, SIGKILL);
			break;
		}
		int n = poll(pfd, 2, (int)(left > 1000 ? 1000 : left));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[8192];
			ssize_t r = read(pfd[i].fd, buf, sizeof buf);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open_fds--;
				continue;
			}
			cap_append(&cb[i], buf, (size_t)r);
		}
	}
	for (int i = 0; i < 2; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	int st = 0;
	SB_RETRY_EINTR(waitpid(pid, &st, 0));
	o->status = st;
	o->out = cap_finish(&cb[0]);
	o->err = cap_finish(&cb[1]);
	return (!o->timed_out && WIFEXITED(st) && WEXITSTATUS(st) == 0) ? 0 : -1;
}

void pm_out_free(struct pm_out *o)
{
	free(o->out);
	free(o->err);
	o->out = o->err = NULL;
}

void pm_out_describe(const struct pm_out *o, char *buf, size_t n)
{
	if (o->spawn_errno) {
		snprintf(buf, n, "could not start it: %s", strerror(o->spawn_errno));
		return;
	}
	if (o->timed_out) {
		snprintf(buf, n, "no answer within its time limit (killed)");
		return;
	}
	const char *msg = (o->err && o->err[0]) ? o->err : (o->out ? o->out : "");
	size_t len = strcspn(msg, "\n");
	if (len > 400)
		len = 400;
	if (WIFEXITED(o->status))
		snprintf(buf, n, "exit %d%s%.*s", WEXITSTATUS(o->status), len ? ": " : "", (int)len, msg);
	else if (WIFSIGNALED(o->status))
		snprintf(buf, n, "killed by signal %d", WTERMSIG(o->status));
	else
		snprintf(buf, n, "failed");
}
