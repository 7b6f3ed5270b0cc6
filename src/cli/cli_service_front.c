/* sagebox mcp --service: the thin stdio front of the user-level service
 * (the service is transport/service.c). It finds the service for
 * this uid, client and settings by a hash of them, starts it when none
 * listens, and relays stdin/stdout to its socket. Any failure before the
 * first relayed byte is said on stderr and the caller serves in-process as
 * without --service: the service is a speed-up, never a dependency. */
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/exit_status.h"
#include "transport/service.h"
#include "util/clock.h"
#include "util/fd.h"
#include "util/statedir.h"
#include "util/unix_socket.h"

extern char **environ;

/* How long a starting service may take to accept, and to greet. */
#define START_WAIT_MS 3000
#define GREET_WAIT_MS 3000

struct front {
	char identity[4096];
	char exe[4096];
	char sock[108];
	char lock[128];
	char why[10000]; /* why the front gives up (then the caller serves in-process) */
};

static bool is_service_flag(const char *a)
{
	return !strcmp(a, "--service") || !strncmp(a, "--service=", 10);
}

/* What decides which sandbox and limits the service has: the environment
 * variables sagebox or Sage's location depend on. */
static bool hashed_var(const char *e)
{
	static const char *const exact[] = {"HOME=", "PATH=", "USER=", "LANG="};
	for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
		if (!strncmp(e, exact[i], strlen(exact[i])))
			return true;
	return !strncmp(e, "SAGEBOX_", 8) || !strncmp(e, "LC_", 3) || !strncmp(e, "XDG_", 4);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void put(struct sha256_ctx *h, const void *p, size_t n)
{
	sha256_update(h, n, p);
	sha256_update(h, 1, (const uint8_t *)""); /* a separator: fields cannot run together */
}

static void put_str(struct sha256_ctx *h, const char *label, const char *s)
{
	put(h, label, strlen(label));
	put(h, s, strlen(s));
}

/* The settings hash: uid, client identity, the binary, argv (without
 * --service), the environment that matters, the config file's path and
 * bytes. Two fronts share a service only when all of them are equal. */
static int settings_hash(struct front *f, int argc, char **argv, const struct sb_config *cfg, char hex[65])
{
	struct sha256_ctx h;
	sha256_init(&h);
	char num[160];
	snprintf(num, sizeof num, "%ld", (long)getuid());
	put_str(&h, "uid", num);
	put_str(&h, "client", f->identity);
	struct stat st;
	if (stat("/proc/self/exe", &st) < 0)
		return snprintf(f->why, sizeof f->why, "cannot stat /proc/self/exe: %s", strerror(errno)), -1;
	snprintf(num, sizeof num, "%ju:%ju:%jd:%jd.%ld", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino,
		 (intmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	put_str(&h, "binary", num);
	for (int i = 0; i < argc; i++)
		if (!is_service_flag(argv[i]))
			put_str(&h, "arg", argv[i]);
	size_t n = 0;
	for (char **e = environ; *e; e++)
		n++;
	char **vars = calloc(n + 1, sizeof *vars);
	if (!vars)
		return snprintf(f->why, sizeof f->why, "out of memory"), -1;
	size_t k = 0;
	for (char **e = environ; *e; e++)
		if (hashed_var(*e))
			vars[k++] = *e;
	qsort(vars, k, sizeof *vars, cmp_str);
	for (size_t i = 0; i < k; i++)
		put_str(&h, "env", vars[i]);
	free(vars);
	put_str(&h, "config", cfg->config_path);
	if (cfg->config_path[0]) {
		SB_AUTO_FD fd = open(cfg->config_path, O_RDONLY | O_CLOEXEC);
		char buf[8192];
		ssize_t r;
		while (fd >= 0 && (r = sb_read_retry(fd, buf, sizeof buf)) > 0)
			sha256_update(&h, (size_t)r, (const uint8_t *)buf);
	}
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_digest(&h, sizeof d, d);
	for (size_t i = 0; i < sizeof d; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return 0;
}

/* $XDG_RUNTIME_DIR/sagebox, private (sb_private_dir): a directory another
 * user could write to would let them put their own socket where the front
 * looks, and receive the client's code. */
static int runtime_dir(struct front *f, char *dir, size_t n)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	if (!rt || rt[0] != '/')
		return snprintf(f->why, sizeof f->why, "XDG_RUNTIME_DIR is not set"), -1;
	if ((size_t)snprintf(dir, n, "%s/sagebox", rt) >= n)
		return snprintf(f->why, sizeof f->why, "XDG_RUNTIME_DIR is too long"), -1;
	struct sb_error e;
	if (sb_private_dir(dir, &e) < 0)
		return snprintf(f->why, sizeof f->why, "%s", e.msg), -1;
	return 0;
}

/* The service's log grows by a line or two a call, for as long as the
 * user uses --service: past this size, a starting service moves it to
 * service.log.1 (replacing the one before) and starts a new one. */
#define LOG_KEEP_BYTES (1024 * 1024)

/* The service's own log: $XDG_STATE_HOME/sagebox/service.log. */
static int open_log(void)
{
	char dir[4096], path[4200], old[4210];
	struct sb_error err = {0};
	if (sb_state_dir(dir, sizeof dir, &err) < 0)
		return open("/dev/null", O_WRONLY | O_CLOEXEC);
	snprintf(path, sizeof path, "%s/service.log", dir);
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > LOG_KEEP_BYTES) {
		snprintf(old, sizeof old, "%s.1", path);
		(void)rename(path, old);
	}
	return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
}

/* Start the service, detached: its own session, not the host app's child
 * (the host waits for its children and their pipes), stdin and stdout
 * /dev/null, stderr its log, no fd of the host app's. */
static int start_service(struct front *f, int argc, char **argv)
{
	char **args = calloc((size_t)argc + 3, sizeof *args);
	if (!args)
		return snprintf(f->why, sizeof f->why, "out of memory"), -1;
	int k = 0;
	args[k++] = "sagebox";
	for (int i = 0; i < argc; i++)
		if (!is_service_flag(argv[i]))
			args[k++] = argv[i];
	pid_t pid = fork();
	if (pid < 0) {
		free(args);
		return snprintf(f->why, sizeof f->why, "fork: %s", strerror(errno)), -1;
	}
	if (pid == 0) {
		if (setsid() < 0 || fork() != 0)
			_exit(0);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		int log = open_log();
		if (null < 0 || log < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(log, 2) < 0)
			_exit(127);
		for (int fd = 3; fd < 1024; fd++) /* the host app's fds stay with it */
			close(fd);
		setenv(SB_SERVICE_SOCKET_ENV, f->sock, 1);
		setenv(SB_SERVICE_IDENTITY_ENV, f->identity, 1);
		signal(SIGPIPE, SIG_DFL);
		execv(f->exe, args);
		fprintf(stderr, "sagebox service: cannot run %s: %s\n", f->exe, strerror(errno));
		_exit(127);
	}
	free(args);
	int st;
	(void)SB_RETRY_EINTR(waitpid(pid, &st, 0));
	return 0;
}

/* Read the service's greeting line. 0: OK; -1 with why. */
static int greeting(struct front *f, int fd)
{
	char line[2400];
	size_t n = 0;
	uint64_t end = sb_now_ms() + GREET_WAIT_MS;
	while (n < sizeof line - 1) {
		uint64_t now = sb_now_ms();
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (now >= end || SB_RETRY_EINTR(poll(&p, 1, (int)(end - now))) <= 0)
			return snprintf(f->why, sizeof f->why, "the service did not answer within %d ms", GREET_WAIT_MS), -1;
		/* byte by byte: nothing after the line may be taken from the stream */
		ssize_t r = sb_read_retry(fd, line + n, 1);
		if (r <= 0)
			break;
		if (line[n++] == '\n')
			break;
	}
	line[n] = '\0';
	if (!strcmp(line, SB_SERVICE_OK))
		return 0;
	line[strcspn(line, "\n")] = '\0';
	return snprintf(f->why, sizeof f->why, "the service said: %.500s", n ? line : "nothing (it closed)"), -1;
}

/* Connected to a service that greeted us, or -1 with why. Under the lock:
 * one front starts the service, the others wait for it; and an idle
 * service does not exit while a front connects. */
static int reach(struct front *f, int argc, char **argv)
{
	SB_AUTO_FD lk = open(f->lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lk < 0 || SB_RETRY_EINTR(flock(lk, LOCK_EX)) < 0)
		return snprintf(f->why, sizeof f->why, "cannot lock %s: %s", f->lock, strerror(errno)), -1;
	int fd = sb_unix_connect(f->sock, 0);
	if (fd < 0) {
		if (start_service(f, argc, argv) < 0)
			return -1;
		uint64_t end = sb_now_ms() + START_WAIT_MS;
		while ((fd = sb_unix_connect(f->sock, 0)) < 0 && sb_now_ms() < end)
			usleep(10 * 1000);
		if (fd < 0)
			return snprintf(f->why, sizeof f->why, "the service did not start within %d ms (see its log, "
				"service.log in sagebox's state directory)", START_WAIT_MS), -1;
	}
	if (greeting(f, fd) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

struct pipebuf {
	char data[65536];
	size_t len, off;
};

/* Move bytes both ways until the service closes the socket. stdin's end is
 * passed on as a half-close: the answers still in flight come back. */
static int relay(int sock)
{
	static struct pipebuf up, down; /* up: stdin -> socket; down: socket -> stdout */
	bool in_open = true, shut = false;
	if (sb_set_nonblock(sock, 1) < 0)
		return SB_EXIT_FAILURE;
	for (;;) {
		struct pollfd p[3] = {{.fd = -1}, {.fd = sock}, {.fd = -1}};
		if (in_open && !up.len)
			p[0] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
		p[1].events = (up.len ? POLLOUT : 0) | (down.len ? 0 : POLLIN);
		if (down.len)
			p[2] = (struct pollfd){.fd = STDOUT_FILENO, .events = POLLOUT};
		if (SB_RETRY_EINTR(poll(p, 3, -1)) < 0)
			return SB_EXIT_FAILURE;
		if (p[0].revents) {
			ssize_t r = sb_read_retry(STDIN_FILENO, up.data, sizeof up.data);
			if (r > 0)
				up.len = (size_t)r, up.off = 0;
			else
				in_open = false;
		}
		if (up.len && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = SB_RETRY_EINTR(send(sock, up.data + up.off, up.len - up.off, MSG_NOSIGNAL));
			if (w < 0 && errno != EAGAIN)
				return SB_EXIT_FAILURE; /* the service is gone */
			if (w > 0 && (up.off += (size_t)w) == up.len)
				up.len = up.off = 0;
		}
		if (!in_open && !up.len && !shut) {
			shutdown(sock, SHUT_WR);
			shut = true;
		}
		if (!down.len && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t r = SB_RETRY_EINTR(recv(sock, down.data, sizeof down.data, 0));
			if (r == 0 || (r < 0 && errno != EAGAIN))
				return r == 0 ? SB_EXIT_OK : SB_EXIT_FAILURE;
			if (r > 0)
				down.len = (size_t)r, down.off = 0;
		}
		if (down.len && p[2].revents) {
			ssize_t w = SB_RETRY_EINTR(write(STDOUT_FILENO, down.data + down.off, down.len - down.off));
			if (w < 0)
				return SB_EXIT_FAILURE; /* the client is gone */
			if ((down.off += (size_t)w) == down.len)
				down.len = down.off = 0;
		}
	}
}

int sb_cli_service_front(int argc, char **argv, const struct sb_config *cfg)
{
	static struct front f;
	char dir[4096], hex[65];
	/* The client: the executable of the process that started us (LM
	 * Studio, Claude Desktop, a shell). */
	sb_service_identity(getppid(), f.identity, sizeof f.identity);
	ssize_t k = readlink("/proc/self/exe", f.exe, sizeof f.exe - 1);
	if (k <= 0)
		snprintf(f.why, sizeof f.why, "cannot read /proc/self/exe: %s", strerror(errno));
	else
		f.exe[k] = '\0';
	int sock = -1;
	if (k > 0 && runtime_dir(&f, dir, sizeof dir) == 0 && settings_hash(&f, argc, argv, cfg, hex) == 0) {
		if ((size_t)snprintf(f.sock, sizeof f.sock, "%s/mcp-%.32s.sock", dir, hex) >= sizeof f.sock)
			snprintf(f.why, sizeof f.why, "the socket path under %s is too long", dir);
		else {
			(void)sb_service_lock_path(f.sock, f.lock, sizeof f.lock); /* fits: 108 + 5 < 128 */
			signal(SIGPIPE, SIG_IGN);
			sock = reach(&f, argc, argv);
		}
	}
	if (sock < 0) {
		fprintf(stderr, "sagebox mcp: --service: %s; serving in this process instead\n", f.why);
		return -1;
	}
	fprintf(stderr, "sagebox mcp: --service: relaying to the service at %s (its log: service.log in sagebox's "
		"state directory)\n", f.sock);
	int rc = relay(sock);
	close(sock);
	return rc;
}
