/* Starting the network proxy and giving it a socket per sandbox (spawn.h). */
#include "net/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "metrics/metrics.h"
#include "net/proxy.h"
#include "sandbox/native/native.h"
#include "util/unix_socket.h"

#define SOCK_NAME "proxy.sock"
#define CONTROL_FD 3 /* the control socket's number in the proxy */

static struct {
	pthread_mutex_t lock;
	pid_t pid;
	int control;          /* our end of the SOCK_SEQPACKET control socket */
	unsigned next_id;
	char base[96];        /* every sandbox's socket dir is below it (a sun_path is 108 bytes) */
	bool chown_to;        /* started as root: dirs and sockets go to the sandbox user */
	uid_t uid;
	gid_t gid;
} px = {PTHREAD_MUTEX_INITIALIZER, 0, -1, 1, "", false, 0, 0};

pid_t sb_netproxy_pid(void)
{
	return px.pid;
}

/* The proxy's tallies since the last render, counted for Prometheus
 * (proxy.h: "tally ALLOWED REFUSED FAILED"). The proxy runs as another
 * user and faces the sandboxes: a message that is not a tally, or a
 * count no connection rate could reach, is ignored, and a descriptor it
 * might pass along is not accepted (recv, no control buffer). */
static void collect_tally(void *ctx)
{
	(void)ctx;
	static const char *const outcome[] = {"allowed", "refused", "failed"};
	double sum[3] = {0, 0, 0};
	char msg[SB_PROXY_MSG_MAX + 1];
	ssize_t n;
	pthread_mutex_lock(&px.lock);
	while (px.control >= 0 && (n = recv(px.control, msg, SB_PROXY_MSG_MAX, MSG_DONTWAIT)) > 0) {
		msg[n] = '\0';
		unsigned long long v[3];
		if (sscanf(msg, SB_PROXY_TALLY, &v[0], &v[1], &v[2]) == 3 && v[0] < 1u << 30 && v[1] < 1u << 30 &&
		    v[2] < 1u << 30)
			for (int i = 0; i < 3; i++)
				sum[i] += (double)v[i];
	}
	pthread_mutex_unlock(&px.lock);
	for (int i = 0; i < 3; i++)
		sb_metric_add(SB_M_PROXY_CONNECTIONS, sum[i], (const char *const[]){outcome[i]});
}

static int give(const char *path)
{
	return px.chown_to ? chown(path, px.uid, px.gid) : 0;
}

int sb_netproxy_start(const struct sb_config *cfg, struct sb_error *err)
{
	if (!cfg->net.n || px.pid)
		return 0;
	if (geteuid() == 0) {
		if (nat_resolve_user(cfg->sandbox_user, &px.uid, &px.gid, err))
			return -1;
		px.chown_to = true;
	}
	const char *tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/' || strlen(tmp) > 60)
		tmp = "/tmp"; /* a socket's path must fit in 108 bytes */
	snprintf(px.base, sizeof px.base, "%s/sagebox-net-XXXXXX", tmp);
	if (!mkdtemp(px.base) || give(px.base))
		return sb_fail(err, "network proxy: cannot make its socket directory %s: %s", px.base,
			       strerror(errno));
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		rmdir(px.base);
		return sb_fail_errno(err, "network proxy: socketpair");
	}
	/* Everything the child needs, made before fork (the caller may have
	 * threads: after fork only async-signal-safe calls). The proxy reads
	 * the same config as we did, with the settings that matter given
	 * explicitly. */
	char fdnum[8];
	snprintf(fdnum, sizeof fdnum, "%d", CONTROL_FD);
	const char *argv[20];
	int n = 0;
	argv[n++] = "sagebox";
	argv[n++] = "proxy";
	if (cfg->config_path[0]) {
		argv[n++] = "--config";
		argv[n++] = cfg->config_path;
	}
	argv[n++] = "--control-fd";
	argv[n++] = fdnum;
	argv[n++] = "--socket-dir";
	argv[n++] = px.base;
	argv[n++] = "--network";
	argv[n++] = cfg->network;
	argv[n++] = "--sandbox-user";
	argv[n++] = cfg->sandbox_user;
	argv[n++] = "--audit-log";
	argv[n++] = cfg->audit_log;
	argv[n] = NULL;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	pid_t pid = fork();
	if (pid == 0) {
		/* Never the MCP stdio: stdin and stdout are /dev/null; stderr
		 * stays for its own complaints. */
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(sv[1], CONTROL_FD) < 0)
			_exit(127);
		sigset_t all;
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		execv("/proc/self/exe", (char *const *)argv);
		_exit(127);
	}
	int saved = errno;
	if (null >= 0)
		close(null);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		rmdir(px.base);
		errno = saved;
		return sb_fail_errno(err, "network proxy: fork");
	}
	px.pid = pid;
	px.control = sv[0];
	sb_metrics_collector_add(collect_tally, NULL);
	return 0;
}

static int listen_at(const char *path)
{
	int fd = sb_unix_bind(path);
	if (fd < 0)
		return -1;
	if (listen(fd, 64) || give(path) || chmod(path, 0666)) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

static int send_msg(const char *msg, int fd)
{
	struct iovec iov = {(void *)msg, strlen(msg)};
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (fd >= 0) {
		memset(cbuf, 0, sizeof cbuf);
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof cbuf;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof fd);
	}
	return sendmsg(px.control, &mh, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

static void remove_dir(const char *dir)
{
	char sock[PATH_MAX + 16];
	snprintf(sock, sizeof sock, "%s/" SOCK_NAME, dir);
	unlink(sock);
	rmdir(dir);
}

/* "VERB ID WHO": the who is one line of the audit, no more (a client's
 * name could carry a newline). */
static void control_msg(char *msg, size_t n, const char *verb, unsigned id, const char *who)
{
	snprintf(msg, n, "%s %u %s", verb, id, who);
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
}

/* A message without a socket, if the proxy runs (best effort: a proxy
 * that is gone has closed every socket already). */
static void tell(const char *msg)
{
	pthread_mutex_lock(&px.lock);
	if (px.pid)
		send_msg(msg, -1);
	pthread_mutex_unlock(&px.lock);
}

int sb_netproxy_add(const char *who, struct sb_netslot *slot, struct sb_error *err)
{
	slot->id = 0;
	slot->dir[0] = '\0';
	pthread_mutex_lock(&px.lock);
	if (!px.pid) {
		pthread_mutex_unlock(&px.lock);
		return 0;
	}
	unsigned id = px.next_id++;
	char dir[sizeof px.base + 16], sock[sizeof dir + 16], msg[SB_PROXY_MSG_MAX];
	snprintf(dir, sizeof dir, "%s/%u", px.base, id);
	snprintf(sock, sizeof sock, "%s/" SOCK_NAME, dir);
	control_msg(msg, sizeof msg, "add", id, who);
	int fd = -1;
	/* Reachable by the sandbox's uid whatever it is: a Podman container's
	 * uid is a subordinate uid, not ours, so the directory is 0711 (enter,
	 * not list) and the socket 0666 (connect). No host user gains by it:
	 * px.base above is 0700, so only we (and the one sandbox it is bound
	 * into) can reach the path, and host users have a network of their
	 * own anyway. chmod, not the mode argument: the umask would narrow it. */
	if (mkdir(dir, 0700) || give(dir) || chmod(dir, 0711) || (fd = listen_at(sock)) < 0) {
		sb_fail(err, "network proxy: cannot make the sandbox's socket %s: %s", sock, strerror(errno));
		remove_dir(dir);
		pthread_mutex_unlock(&px.lock);
		return -1;
	}
	int rc = send_msg(msg, fd);
	int saved = errno;
	close(fd);
	if (rc) {
		remove_dir(dir);
		pthread_mutex_unlock(&px.lock);
		errno = saved;
		sb_fail(err, "the network proxy (pid %d) is gone: %s", (int)px.pid, strerror(saved));
		sb_hint(err, "its complaint is on sagebox's stderr; restart sagebox");
		return -1;
	}
	pthread_mutex_unlock(&px.lock);
	slot->id = id;
	snprintf(slot->dir, sizeof slot->dir, "%s", dir);
	return 0;
}

void sb_netproxy_who(const struct sb_netslot *slot, const char *who)
{
	if (!slot->id)
		return;
	char msg[SB_PROXY_MSG_MAX];
	control_msg(msg, sizeof msg, "who", slot->id, who);
	tell(msg);
}

void sb_netproxy_del(struct sb_netslot *slot)
{
	if (!slot->id)
		return;
	char msg[32];
	snprintf(msg, sizeof msg, "del %u", slot->id);
	tell(msg);
	remove_dir(slot->dir);
	slot->id = 0;
	slot->dir[0] = '\0';
}

void sb_netproxy_stop(void)
{
	/* Before the lock: a render under way may be in collect_tally. */
	if (px.pid)
		sb_metrics_collector_remove(collect_tally, NULL);
	pthread_mutex_lock(&px.lock);
	if (px.pid) {
		close(px.control);
		px.control = -1;
		/* It exits at the hang-up and removes px.base itself. */
		while (waitpid(px.pid, NULL, 0) < 0 && errno == EINTR)
			;
		rmdir(px.base);
		px.pid = 0;
	}
	pthread_mutex_unlock(&px.lock);
}
