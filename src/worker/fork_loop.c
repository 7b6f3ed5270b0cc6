/* The forker (src/worker/driver/forker.py): forked from the worker and
 * then, for each request from the worker, forks a spare, reaps the spares
 * and reports both. All in C, from the fork that makes it: the forker runs
 * no Python at all, so it writes to none of the memory it shares with the
 * worker and its children. Any Python writes reference counts, pymalloc's
 * pools and malloc's free lists all over the heap, and each write to a
 * shared 2 MiB huge page splits it into 512 entries that every later fork
 * copies: a Python loop, forked by os.fork, had 30,700 such entries where
 * the worker had 13,300 (os.fork's own after-fork work in the child split
 * 60 MiB of huge pages). This one writes its stack, glibc's fork state
 * and its socket buffers.
 *
 * No Python headers: called through ctypes by the worker, it returns there
 * with the forker's pid (or -1), and in each spare with 0 and the request.
 * The forker itself never returns: it _exits when the worker is gone.
 * Built like huge_arenas.c: by the compiler alone, loaded from a memfd. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25   /* Linux 6.1 */
#endif

/* The spare's fds: job_r, out_w, err_w, disp_w, and trace_w when traced. */
#define MAX_FDS 5
/* worker -> forker: struct "<dB" (pretouch_after, flags) */
#define REQUEST_BYTES 9
/* forker -> worker: struct "<cii" ('P', pid or -errno, 0 | 'S', pid, status) */
#define RECORD_BYTES 9

static int send_record(int sock, char kind, int32_t pid, int32_t status)
{
	unsigned char rec[RECORD_BYTES];
	rec[0] = (unsigned char)kind;
	memcpy(rec + 1, &pid, 4);     /* little-endian: x86-64, aarch64 */
	memcpy(rec + 5, &status, 4);
	ssize_t n;
	do
		n = send(sock, rec, sizeof rec, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof rec ? 0 : -1;
}

/* Reap every exited child and report it; then wake the worker once. */
static int reap(int sock, int sfd, int wake_w)
{
	struct signalfd_siginfo si;
	while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
		;
	int any = 0, status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (send_record(sock, 'S', pid, status) != 0)
			return -1;
		any = 1;
	}
	if (any) {
		char b = 0;
		(void)!write(wake_w, &b, 1);   /* non-blocking; full means already woken */
	}
	return 0;
}

/* One request: its header and fds. 1: got one; 0: the worker closed; -1. */
static int receive(int sock, unsigned char req[REQUEST_BYTES], int fds[MAX_FDS], int *nfds)
{
	union {
		char buf[CMSG_SPACE(MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {req, REQUEST_BYTES};
	struct msghdr msg = {0};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof ctl.buf;
	ssize_t n;
	do
		/* close-on-exec, as the worker's pipes are: no program a job runs
		 * inherits its display pipe */
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n == 0 ? 0 : -1;
	*nfds = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
			if (*nfds < MAX_FDS)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	if (n != REQUEST_BYTES || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		for (int i = 0; i < *nfds; i++)
			close(fds[i]);
		return -1;
	}
	return 1;
}

static int serve(int sock, int wake_w, int *fds_out, int *nfds_out, double *after_out,
		 int *flags_out)
{
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, &old) != 0)
		return -1;
	int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return -1;
	for (;;) {
		struct pollfd p[2] = {{sock, POLLIN, 0}, {sfd, POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[1].revents && reap(sock, sfd, wake_w) != 0)
			return -1;
		if (!p[0].revents)
			continue;
		unsigned char req[REQUEST_BYTES];
		int fds[MAX_FDS], nfds = 0;
		int got = receive(sock, req, fds, &nfds);
		if (got <= 0)
			return got == 0 ? -2 : -1;
		pid_t pid = fork();
		int err = errno;
		if (pid == 0) {
			close(sfd);
			close(sock);
			close(wake_w);
			sigprocmask(SIG_SETMASK, &old, NULL);
			memcpy(fds_out, fds, sizeof fds);
			*nfds_out = nfds;
			memcpy(after_out, req, sizeof *after_out);
			*flags_out = req[8];
			return 0;
		}
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		if (send_record(sock, 'P', pid > 0 ? pid : -err, 0) != 0)
			return -1;
	}
}

/* Fork the forker. ranges: [start, end) pairs of the worker's heap, backed
 * with huge pages again right before the fork (the worker's Python split
 * the pages it wrote since they were last collapsed; only C runs between
 * this and the fork, so the forker starts with all of them whole; best
 * effort). close_fds: the worker's own fds (the channel to the host, the
 * janitor's pipes, the worker's end of sock), closed in the forker first
 * thing: no spare, and so no job, may inherit them. */
int sagebox_forker_start(const unsigned long *ranges, int nranges, int sock, int wake_w,
			 const int *close_fds, int nclose, int *fds_out, int *nfds_out,
			 double *after_out, int *flags_out)
{
	for (int i = 0; i + 1 < 2 * nranges; i += 2) {
		void *at = (void *)ranges[i];
		size_t len = ranges[i + 1] - ranges[i];
		madvise(at, len, MADV_HUGEPAGE);
		madvise(at, len, MADV_COLLAPSE);
	}
	pid_t pid = fork();
	if (pid != 0)
		return pid;   /* the worker: the forker's pid, or -1 */
	for (int i = 0; i < nclose; i++)
		close(close_fds[i]);
	if (serve(sock, wake_w, fds_out, nfds_out, after_out, flags_out) == 0)
		return 0;     /* a spare */
	_exit(0);             /* the worker closed its end, or the loop failed */
}
