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
#include "net/proxy_control.h"
#include "sandbox/sandbox_user.h"
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

/* The refusals the proxy reported (proxy_control.h), the newest
 * REFUSALS_KEPT of all sandboxes, each with its sandbox's socket id, in
 * the order reported: refusals_seq counts them all; and the tallies of
 * connections by outcome not yet counted for Prometheus (under px.lock). */
#define REFUSALS_KEPT 64
static struct {
	unsigned slot;
	struct sb_net_refusal r;
} refusals[REFUSALS_KEPT];
static unsigned refusals_seq;
static uint64_t tallied[3];

/* Under px.lock: every message the proxy has sent so far, the one reader
 * of the control socket. It sends a refusal before it answers the code, so
 * what the code saw refused is here once its call has ended. The proxy
 * runs as another user and faces the sandboxes: a message that is neither
 * is ignored, and a descriptor it might pass along is not accepted (recv,
 * no control buffer). */
static void drain_locked(void)
{
	char msg[SB_PROXY_REPORT_MAX + 1];
	ssize_t n;
	while (px.pid && (n = recv(px.control, msg, sizeof msg - 1, MSG_DONTWAIT)) > 0) {
		unsigned id;
		struct sb_net_refusal r;
		uint64_t t[3];
		if (!sb_proxy_refusal_parse(msg, (size_t)n, &id, &r)) {
			refusals[refusals_seq % REFUSALS_KEPT].slot = id;
			refusals[refusals_seq % REFUSALS_KEPT].r = r;
			refusals_seq++;
		} else if (!sb_proxy_tally_parse(msg, (size_t)n, t)) {
			for (int i = 0; i < 3; i++)
				tallied[i] += t[i];
		}
	}
}

/* At each scrape: the proxy's tallies since the last, counted. */
static void collect_tally(void *ctx)
{
	(void)ctx;
	static const char *const outcome[] = {"allowed", "refused", "failed"};
	uint64_t sum[3];
	pthread_mutex_lock(&px.lock);
	drain_locked();
	memcpy(sum, tallied, sizeof sum);
	memset(tallied, 0, sizeof tallied);
	pthread_mutex_unlock(&px.lock);
	for (int i = 0; i < 3; i++)
		sb_metric_add(SB_M_PROXY_CONNECTIONS, (double)sum[i], (const char *const[]){outcome[i]});
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
		if (sb_sandbox_user_resolve(cfg->sandbox_user, &px.uid, &px.gid, err))
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
	 * no config: its user and log are on its command line, its allow-list
	 * is the one we parsed, the first message on the control socket. */
	char fdnum[8];
	snprintf(fdnum, sizeof fdnum, "%d", CONTROL_FD);
	const char *argv[12];
	int n = 0;
	argv[n++] = "sagebox";
	argv[n++] = "proxy";
	argv[n++] = "--control-fd";
	argv[n++] = fdnum;
	argv[n++] = "--socket-dir";
	argv[n++] = px.base;
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
	if (sb_proxy_list_send(px.control, &cfg->net)) {
		sb_fail(err, "network proxy: cannot hand it the allow-list: %s", strerror(errno));
		sb_netproxy_stop();
		return -1;
	}
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

unsigned sb_netproxy_mark(const struct sb_netslot *slot)
{
	if (!slot->id)
		return 0;
	pthread_mutex_lock(&px.lock);
	drain_locked();
	unsigned mark = refusals_seq;
	pthread_mutex_unlock(&px.lock);
	return mark;
}

void sb_netproxy_refusals(const struct sb_netslot *slot, unsigned mark, struct sb_result *res)
{
	if (!slot->id)
		return;
	pthread_mutex_lock(&px.lock);
	drain_locked();
	unsigned from = refusals_seq - mark > REFUSALS_KEPT ? refusals_seq - REFUSALS_KEPT : mark;
	for (unsigned seq = from; seq != refusals_seq; seq++) {
		if (refusals[seq % REFUSALS_KEPT].slot != slot->id)
			continue;
		if (res->n_net_refused < SB_NET_REFUSALS_MAX)
			res->net_refused[res->n_net_refused++] = refusals[seq % REFUSALS_KEPT].r;
		else
			res->net_refused_more++;
	}
	pthread_mutex_unlock(&px.lock);
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
