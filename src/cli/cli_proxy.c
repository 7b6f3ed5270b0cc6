/* sagebox proxy --listen PATH: the network proxy (src/net/proxy.c) in the
 * foreground on one Unix socket, with the `network` setting as configured.
 * Try an allow-list before giving it to sandboxes:
 *   sagebox proxy --network oeis.org --listen /tmp/p.sock &
 *   curl --unix-socket /tmp/p.sock -x http://proxy http://oeis.org/
 * sagebox itself starts the same proxy with --control-fd and --socket-dir
 * (net/spawn.c), and hands it the allow-list it parsed. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/exit_status.h"
#include "net/proxy.h"
#include "net/proxy_control.h"
#include "sandbox/sandbox_user.h"
#include "util/unix_socket.h"

/* A socket at P that nobody listens on is one a killed proxy left: gone.
 * Anything else (a live proxy's socket, a user's file) stays. */
static void remove_stale_socket(const char *p)
{
	struct stat st;
	if (lstat(p, &st) || !S_ISSOCK(st.st_mode))
		return;
	/* non-blocking: a live proxy with a full backlog answers EAGAIN, not a hang */
	int fd = sb_unix_connect(p, SOCK_NONBLOCK);
	if (fd >= 0)
		close(fd);
	else if (errno == ECONNREFUSED)
		unlink(p);
}

/* The socket appears at PATH only once it listens: bound under PATH~ and
 * linked into place, so a client that waits for PATH to exist (a script,
 * our tests) is never refused in the moment between bind and listen. A
 * link, not a rename: it fails on anything already at PATH, as bind did. */
static int listen_unix(const char *path)
{
	struct sockaddr_un a;
	char tmp[sizeof a.sun_path + 1];
	if (snprintf(tmp, sizeof tmp, "%s~", path) >= (int)sizeof a.sun_path) {
		fprintf(stderr, "sagebox: proxy: socket path too long (at most %zu bytes): %s\n",
			sizeof a.sun_path - 2, path);
		return -1;
	}
	remove_stale_socket(path);
	remove_stale_socket(tmp);
	int fd = sb_unix_bind(tmp);
	bool ok = fd >= 0 && !listen(fd, 64) && !link(tmp, path);
	int saved = errno;
	if (fd >= 0)
		unlink(tmp);
	if (!ok) {
		fprintf(stderr, "sagebox: proxy: cannot listen on %s: %s\n", path, strerror(saved));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The --listen socket, removed when the proxy ends or a signal ends it (a
 * TERM from a service manager, a Ctrl-C), unless another file has taken its
 * place. Async-signal-safe: lstat and unlink only. */
static const char *listen_path;
static struct stat listen_stat;

static void remove_socket_if_ours(void)
{
	struct stat st;
	if (listen_path && !lstat(listen_path, &st) && st.st_dev == listen_stat.st_dev &&
	    st.st_ino == listen_stat.st_ino)
		unlink(listen_path);
}

static void remove_socket_and_die(int sig)
{
	remove_socket_if_ours();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void own_listen_socket(const char *path)
{
	if (lstat(path, &listen_stat))
		return;
	listen_path = path;
	struct sigaction sa = {.sa_handler = remove_socket_and_die};
	sigfillset(&sa.sa_mask);
	const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaction(sigs[i], &sa, NULL);
}

/* --socket-dir: sagebox's directory of per-sandbox sockets (net/spawn.c),
 * removed when the proxy ends, so a SIGKILLed sagebox leaves none behind.
 * Only sockets and directories: nothing else is ours to remove there. */
static int remove_ours(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)f;
	if (type == FTW_DP)
		rmdir(path);
	else if (S_ISSOCK(st->st_mode))
		unlink(path);
	return 0;
}

/* Open the audit log, become the sandbox user when root (once the
 * socket is ours), serve, and clean up: `sagebox proxy --listen` and the
 * proxy sagebox starts alike. */
static int serve(const struct sb_netlist *list, const char *sandbox_user, const char *audit_log, int control,
		 const char *path, const char *socket_dir)
{
	int lfd = path ? listen_unix(path) : -1;
	if (path && lfd < 0)
		return 1;
	if (path)
		own_listen_socket(path);
	/* sagebox's own proxy ends when sagebox hangs up on it, and then
	 * removes its socket directory. A Ctrl-C, a terminal's HUP or a
	 * service manager's TERM reaches the whole process group: ended by
	 * it, the proxy would leave every sandbox's socket behind (nftw below
	 * is not for a signal handler), and sagebox, which finishes its calls
	 * before it exits, would lose its proxy while it does. */
	if (control >= 0) {
		const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
		for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
			signal(sigs[i], SIG_IGN);
	}
	int audit = -1;
	if (audit_log[0] && (audit = open(audit_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		fprintf(stderr, "sagebox: proxy: cannot open audit log %s: %s\n", audit_log, strerror(errno));
		return 1;
	}
	/* Never as root: the proxy is the sandboxes' way out and needs nothing
	 * root has. Started as root it becomes sandbox_user, as the sandboxes
	 * do, once its socket and log are open. */
	if (geteuid() == 0) {
		struct sb_error err = {0};
		uid_t uid;
		gid_t gid;
		if (sb_sandbox_user_resolve(sandbox_user, &uid, &gid, &err)) {
			sb_cli_print_error(&err);
			return 1;
		}
		if ((path && chown(path, uid, gid)) || sb_sandbox_user_become(uid, gid) ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
			fprintf(stderr, "sagebox: proxy: cannot become %s: %s\n", sandbox_user, strerror(errno));
			return 1;
		}
	}
	int rc = sb_proxy_run(list, audit, control, lfd, path ? path : "");
	remove_socket_if_ours();
	if (socket_dir)
		nftw(socket_dir, remove_ours, 8, FTW_DEPTH | FTW_PHYS);
	return rc;
}

/* sagebox's own proxy (net/spawn.c): --control-fd N --socket-dir DIR
 * --sandbox-user U --audit-log PATH and no config: the allow-list is the
 * one sagebox parsed, the first message on the control socket. */
static int for_sagebox(int argc, char **argv)
{
	const char *socket_dir = NULL, *user = "", *audit_log = "";
	int control = -1;
	for (int i = 1; i < argc; i += 2) {
		const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
		if (value && !strcmp(flag, "--control-fd"))
			control = atoi(value);
		else if (value && !strcmp(flag, "--socket-dir"))
			socket_dir = value;
		else if (value && !strcmp(flag, "--sandbox-user"))
			user = value;
		else if (value && !strcmp(flag, "--audit-log"))
			audit_log = value;
		else {
			fprintf(stderr, "sagebox: proxy: unknown argument '%s' (with --control-fd: --socket-dir, "
					"--sandbox-user, --audit-log, each with a value)\n",
				flag);
			return SB_EXIT_USAGE;
		}
	}
	struct sb_netlist list;
	const char *why = NULL;
	if (control < 0 || sb_proxy_list_recv(control, &list, &why)) {
		fprintf(stderr, "sagebox: proxy: no allow-list from sagebox: %s\n", why ? why : "no --control-fd");
		return SB_EXIT_USAGE;
	}
	return serve(&list, user, audit_log, control, NULL, socket_dir);
}

int sb_cli_proxy(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--control-fd"))
			return for_sagebox(argc, argv);
	struct sb_config cfg;
	int nrest = 0;
	const char *path = NULL;
	char **rest = sb_cli_settings(argc, argv, &cfg, &nrest);
	if (!rest)
		return SB_EXIT_USAGE;
	for (int i = 1; i < nrest; i++) {
		if (!strcmp(rest[i], "--listen") && i + 1 < nrest)
			path = rest[++i];
		else {
			fprintf(stderr, "sagebox: proxy: unknown argument '%s'\n"
					"usage: sagebox proxy --network LIST --listen SOCKET_PATH\n",
				rest[i]);
			free(rest);
			return SB_EXIT_USAGE;
		}
	}
	free(rest);
	if (!path) {
		fprintf(stderr, "sagebox: proxy: give --listen SOCKET_PATH\n");
		return SB_EXIT_USAGE;
	}
	if (!cfg.net.n) {
		fprintf(stderr, "sagebox: proxy: the network setting is none: nothing would be allowed\n"
				"sagebox: hint: give --network HOSTS (or set network in the config file)\n");
		return SB_EXIT_USAGE;
	}
	return serve(&cfg.net, cfg.sandbox_user, cfg.audit_log, -1, path, NULL);
}
