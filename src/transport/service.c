#include "transport/service.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transport/stdio.h"
#include "util/clock.h"
#include "util/procstat.h"
#include "util/fd.h"
#include "util/unix_socket.h"

void sb_service_identity(pid_t pid, char *out, size_t n)
{
	char link[64];
	snprintf(link, sizeof link, "/proc/%ld/exe", (long)pid);
	ssize_t k = readlink(link, out, n - 1);
	if (k <= 0)
		snprintf(out, n, "unknown");
	else
		out[k] = '\0';
}

pid_t sb_service_parent(pid_t pid)
{
	unsigned long long ppid;
	if (sb_proc_stat_fields(pid, SB_STAT_PPID, 1, &ppid) || ppid == 0)
		return -1;
	return (pid_t)ppid;
}

int sb_service_lock_path(const char *sock, char *out, size_t n)
{
	return (size_t)snprintf(out, n, "%s.lock", sock) < n ? 0 : -1;
}

struct conn {
	struct service *svc;
	int fd;
	struct sb_stdio *io;
	char owner[32];
	pthread_t thread;
	atomic_bool done;
	struct conn *next;
};

struct service {
	struct sb_mcp_server *srv;
	struct sb_runner *runner;
	const struct sb_service_opts *o;
	struct conn *conns;        /* the main loop's only */
	unsigned seq;
	int wake[2];               /* a connection ended */
};

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	if (sb_stdio_serve_as(c->io, c->svc->srv, c->owner) < 0)
		fprintf(stderr, "sagebox service: connection %s: %s\n", c->owner, strerror(errno));
	/* Its calls were cancelled by now; its sessions and jobs go too. */
	sb_runner_end_owner(c->svc->runner, c->owner);
	fprintf(stderr, "sagebox service: connection %s ended\n", c->owner);
	atomic_store(&c->done, true);
	char b = 'e';
	(void)SB_RETRY_EINTR(write(c->svc->wake[1], &b, 1));
	return NULL;
}

static void conn_free(struct conn *c)
{
	pthread_join(c->thread, NULL);
	sb_stdio_free(c->io);
	sb_close(&c->fd);
	free(c);
}

/* Join the connections that ended (all: stop the rest first). */
static void reap(struct service *s, bool all)
{
	for (struct conn **pp = &s->conns; *pp;) {
		struct conn *c = *pp;
		if (all && !atomic_load(&c->done)) {
			char b = 's';
			(void)SB_RETRY_EINTR(write(sb_stdio_stop_fd(c->io), &b, 1));
		}
		if (all || atomic_load(&c->done)) {
			*pp = c->next;
			conn_free(c);
		} else {
			pp = &c->next;
		}
	}
}

/* Why the peer on fd may not connect, or NULL. A process of the same uid
 * can ptrace us or the host app anyway: the uid is the boundary (another
 * uid is refused outright). The identity check keeps a second host app of
 * the same user (say Claude Desktop beside LM Studio) from sharing this
 * one's warm worker by accident: its front would have hashed another
 * socket name, and a peer whose parent runs another executable is refused
 * here. (The peer's pid could be reused between SO_PEERCRED and reading
 * /proc only by a process of the same uid, which could connect anyway.) */
static const char *refused(const struct service *s, int fd, char *why, size_t n)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return snprintf(why, n, "no peer credentials (%s)", strerror(errno)), why;
	if (cr.uid != getuid())
		return snprintf(why, n, "peer uid %ld is not ours (%ld)", (long)cr.uid, (long)getuid()), why;
	pid_t parent = sb_service_parent(cr.pid);
	if (parent <= 0)
		return snprintf(why, n, "the peer's parent process (pid %ld) is not known", (long)cr.pid), why;
	char ident[4096];
	sb_service_identity(parent, ident, sizeof ident);
	if (strcmp(ident, s->o->identity))
		return snprintf(why, n, "the peer's client is %.1000s, this service's is %.1000s", ident,
				s->o->identity),
		       why;
	return NULL;
}

static void accept_one(struct service *s, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	char why[2200];
	if (refused(s, fd, why, sizeof why)) {
		fprintf(stderr, "sagebox service: refused a connection: %s\n", why);
		char line[2300];
		int k = snprintf(line, sizeof line, SB_SERVICE_REFUSED "%s\n", why);
		(void)sb_write_all(fd, line, (size_t)k < sizeof line ? (size_t)k : sizeof line - 1);
		close(fd);
		return;
	}
	struct conn *c = calloc(1, sizeof *c);
	if (c) {
		c->svc = s;
		c->fd = fd;
		snprintf(c->owner, sizeof c->owner, "svc-%u", ++s->seq);
		c->io = sb_stdio_new(fd, fd, SB_STDIO_MAX_MESSAGE);
	}
	if (!c || !c->io || sb_write_all(fd, SB_SERVICE_OK, strlen(SB_SERVICE_OK)) < 0 ||
	    pthread_create(&c->thread, NULL, conn_main, c)) {
		fprintf(stderr, "sagebox service: cannot serve a connection: %s\n", strerror(errno ? errno : ENOMEM));
		if (c)
			sb_stdio_free(c->io);
		free(c);
		close(fd);
		return;
	}
	fprintf(stderr, "sagebox service: connection %s\n", c->owner);
	c->next = s->conns;
	s->conns = c;
}

static int bind_socket(const char *path, struct stat *bound)
{
	/* The front holds <path>.lock while it starts us: no other service
	 * binds here meanwhile, so a file left here is stale. */
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	/* Never umask() here: it is the whole process's, and the warm pool's
	 * threads are already cloning sandboxes, which would inherit it (a
	 * 0177 made their root's directories unenterable). No window for
	 * others either way: the front made the directory 0700 and ours
	 * (sb_private_dir); chmod narrows the socket itself as well. */
	int fd = sb_unix_bind(path);
	if (fd < 0 || chmod(path, 0600) < 0 || listen(fd, 16) < 0 || lstat(path, bound) < 0) {
		fprintf(stderr, "sagebox service: cannot listen on %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Unlink the socket only if it is still the one we bound (a newer service
 * may have replaced it). */
static void unlink_ours(const char *path, const struct stat *bound)
{
	struct stat st;
	if (lstat(path, &st) == 0 && st.st_dev == bound->st_dev && st.st_ino == bound->st_ino)
		unlink(path);
}

/* Idle: stop listening, unless a front is connecting right now (it holds
 * the lock while it connects) or a connection waits to be accepted.
 * true: the socket is gone, exit. */
static bool idle_exit(const char *path, int lfd, const struct stat *bound)
{
	char lock[4200];
	if (sb_service_lock_path(path, lock, sizeof lock) < 0)
		return false;
	SB_AUTO_FD lk = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lk < 0 || flock(lk, LOCK_EX | LOCK_NB) < 0)
		return false;
	struct pollfd p = {.fd = lfd, .events = POLLIN};
	if (poll(&p, 1, 0) > 0)
		return false;
	unlink_ours(path, bound);
	return true; /* the lock goes with lk */
}

int sb_service_serve(const struct sb_service_opts *o, struct sb_mcp_server *srv, struct sb_runner *runner)
{
	struct stat bound;
	SB_AUTO_FD lfd = bind_socket(o->socket_path, &bound);
	if (lfd < 0)
		return -1;
	struct service s = {.srv = srv, .runner = runner, .o = o};
	if (sb_pipe(s.wake) < 0) {
		unlink_ours(o->socket_path, &bound);
		return -1;
	}
	fprintf(stderr, "sagebox service: pid %ld listening on %s for %s; exits after %u s unused\n", (long)getpid(),
		o->socket_path, o->identity, o->idle_s);
	uint64_t idle_since = sb_now_ms();
	for (;;) {
		struct pollfd p[3] = {{.fd = lfd, .events = POLLIN},
				      {.fd = o->stop_fd, .events = POLLIN},
				      {.fd = s.wake[0], .events = POLLIN}};
		if (SB_RETRY_EINTR(poll(p, 3, 1000)) < 0)
			break;
		if (p[1].revents) {
			fprintf(stderr, "sagebox service: stopping (signal)\n");
			break;
		}
		if (p[2].revents) {
			char b[64];
			ssize_t ignored = read(s.wake[0], b, sizeof b);
			(void)ignored;
			reap(&s, false);
		}
		if (p[0].revents & POLLIN)
			accept_one(&s, lfd);
		if (s.conns || sb_runner_in_use(runner)) {
			idle_since = sb_now_ms();
		} else if (sb_now_ms() - idle_since >= (uint64_t)o->idle_s * 1000) {
			if (idle_exit(o->socket_path, lfd, &bound)) {
				fprintf(stderr, "sagebox service: idle for %u s: stopping\n", o->idle_s);
				sb_close(&lfd);
				break;
			}
		}
	}
	sb_close(&lfd); /* no new connection from here on */
	unlink_ours(o->socket_path, &bound);
	reap(&s, true);
	sb_close(&s.wake[0]);
	sb_close(&s.wake[1]);
	return 0;
}
