#include "transport/control.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fd.h"
#include "util/statedir.h"
#include "util/unix_socket.h"

#define MAX_ASKERS 16

struct sb_control {
	char path[256];
	struct stat bound;
	int lfd, stop[2], notify;
	void (*status)(void *ctx, char *buf, size_t n);
	void *ctx;
	pthread_t thread;
	pthread_mutex_t lock;
	int askers[MAX_ASKERS];       /* connections waiting for "stopped" */
};

int sb_control_path(const char *instance, char *out, size_t n, struct sb_error *err)
{
	char dir[4096];
	if (sb_state_dir(dir, sizeof dir, err) < 0)
		return -1;
	if ((size_t)snprintf(out, n, "%s/http-%s.ctl", dir, instance) >= n || strlen(out) >= 108)
		return sb_fail(err, "the control socket's path %s/http-%s.ctl is too long for a Unix socket", dir,
			       instance),
		       sb_hint(err, "set XDG_STATE_HOME to a shorter directory");
	return 0;
}

/* One asker: read its line (a short wait), answer, keep it to tell "stopped". */
static void serve_one(struct sb_control *c, int fd)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.uid != geteuid()) {
		(void)sb_write_all(fd, "refused: not the server's user\n", 31);
		close(fd);
		return;
	}
	char line[64] = "";
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t k = SB_RETRY_EINTR(poll(&p, 1, 2000)) > 0 ? read(fd, line, sizeof line - 1) : -1;
	if (k <= 0 || strncmp(line, "drain", 5)) {
		(void)sb_write_all(fd, "unknown request: send \"drain\"\n", 30);
		close(fd);
		return;
	}
	char b = 'd';
	(void)SB_RETRY_EINTR(write(c->notify, &b, 1));
	char answer[512];
	c->status(c->ctx, answer, sizeof answer - 1);
	size_t n = strlen(answer);
	answer[n++] = '\n';
	(void)sb_write_all(fd, answer, n);
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < MAX_ASKERS; i++)
		if (c->askers[i] < 0) {
			c->askers[i] = fd;
			fd = -1;
			break;
		}
	pthread_mutex_unlock(&c->lock);
	if (fd >= 0)
		close(fd);
}

static void *control_main(void *arg)
{
	struct sb_control *c = arg;
	struct pollfd p[2] = {{.fd = c->lfd, .events = POLLIN}, {.fd = c->stop[0], .events = POLLIN}};
	while (SB_RETRY_EINTR(poll(p, 2, -1)) >= 0 && !p[1].revents) {
		if (!p[0].revents)
			continue;
		int fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			serve_one(c, fd);
	}
	return NULL;
}

/* A socket file at path that a live server answers on. */
static bool live(const char *path)
{
	int fd = sb_unix_connect(path, SOCK_NONBLOCK);
	if (fd >= 0)
		close(fd);
	return fd >= 0 || errno == EAGAIN;
}

struct sb_control *sb_control_start(const char *path, int notify_fd,
				    void (*status)(void *ctx, char *buf, size_t n), void *ctx, struct sb_error *err)
{
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return sb_fail(err, "%s is there and is not a socket", path), NULL;
		if (live(path))
			return sb_fail(err, "another server of this instance and user listens on %s", path),
			       sb_hint(err, "give each server its own instance name (--instance NAME)"), NULL;
		unlink(path); /* a killed server's */
	}
	struct sb_control *c = calloc(1, sizeof *c);
	if (!c)
		return sb_fail(err, "out of memory"), NULL;
	snprintf(c->path, sizeof c->path, "%s", path);
	c->notify = notify_fd;
	c->status = status;
	c->ctx = ctx;
	c->stop[0] = c->stop[1] = -1;
	pthread_mutex_init(&c->lock, NULL);
	for (int i = 0; i < MAX_ASKERS; i++)
		c->askers[i] = -1;
	/* The state directory is 0700 and ours; the socket narrows itself too. */
	if ((c->lfd = sb_unix_bind(path)) < 0 || chmod(path, 0600) < 0 || listen(c->lfd, 8) < 0 ||
	    lstat(path, &c->bound) < 0 || sb_pipe(c->stop) < 0) {
		sb_fail_errno(err, "cannot listen on %s", path);
		if (c->lfd >= 0)
			close(c->lfd);
		sb_close(&c->stop[0]);
		sb_close(&c->stop[1]);
		free(c);
		return NULL;
	}
	if (pthread_create(&c->thread, NULL, control_main, c)) {
		c->thread = 0;
		sb_control_stop(c);
		return sb_fail(err, "cannot start a thread"), NULL;
	}
	return c;
}

void sb_control_stop(struct sb_control *c)
{
	if (!c)
		return;
	if (c->thread) {
		char b = 's';
		(void)SB_RETRY_EINTR(write(c->stop[1], &b, 1));
		pthread_join(c->thread, NULL);
	}
	struct stat st;
	if (lstat(c->path, &st) == 0 && st.st_dev == c->bound.st_dev && st.st_ino == c->bound.st_ino)
		unlink(c->path);
	close(c->lfd);
	for (int i = 0; i < MAX_ASKERS; i++)
		if (c->askers[i] >= 0) {
			(void)sb_write_all(c->askers[i], "stopped\n", 8);
			close(c->askers[i]);
		}
	sb_close(&c->stop[0]);
	sb_close(&c->stop[1]);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int sb_control_drain(const char *path, bool wait, FILE *out, struct sb_error *err)
{
	int fd = sb_unix_connect(path, 0);
	if (fd < 0)
		return sb_fail_errno(err, "no server of this instance listens on %s", path),
		       sb_hint(err, "--drain asks a running sagebox mcp --http of the same user and instance "
				    "(--instance NAME; default: this machine's host name)");
	if (sb_write_all(fd, "drain\n", 6) < 0) {
		close(fd);
		return sb_fail_errno(err, "cannot write to %s", path);
	}
	char buf[512];
	ssize_t k;
	bool first = true;
	while ((k = SB_RETRY_EINTR(read(fd, buf, sizeof buf))) > 0) {
		fwrite(buf, 1, (size_t)k, out);
		fflush(out);
		if (first && !wait)
			break;
		first = false;
	}
	close(fd);
	return 0;
}
