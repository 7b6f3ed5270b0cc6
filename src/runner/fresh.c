#include "runner/fresh.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runner/capture.h"
#include "runner/progress.h"
#include "runner/command.h"
#include "util/clock.h"
#include "util/fd.h"

/* After the command exits, how long its pipes may stay open (a leftover
 * background process holding them) before the sandbox is killed. */
#define EXIT_GRACE_MS 300
/* After a kill, how long to wait for the pipes to close. */
#define KILL_GRACE_MS 3000

struct supervise {
	struct sb_sandbox *sb;
	const struct sb_job *job;
	const struct sb_run_hooks *hooks;
	struct sb_capture out, err;
	size_t in_off;
	int pidfd;
	uint64_t start, deadline, exited_at, killed_at, next_progress;
	bool timed_out, flooded, cancelled, killed;
};

static void kill_sandbox(struct supervise *s)
{
	if (!s->killed) {
		sb_backend_kill(s->sb);
		s->killed = true;
		s->killed_at = sb_now_ms();
	}
}

static void report_progress(struct supervise *s, uint64_t now)
{
	sb_progress_maybe_report(s->hooks, &s->next_progress, s->start, now, &s->out, &s->err);
}

/* Drain one readable pipe; returns 1 at EOF. */
static int drain(struct supervise *s, int *fd, struct sb_capture *c)
{
	char buf[65536];
	for (int rounds = 0; rounds < 16; rounds++) {
		ssize_t n = read(*fd, buf, sizeof buf);
		if (n > 0) {
			sb_capture_add(c, buf, (size_t)n);
			if (c->total > (uint64_t)c->cap * SB_FLOOD_FACTOR && !s->flooded) {
				s->flooded = true;
				kill_sandbox(s);
			}
			continue;
		}
		if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			sb_close(fd);
			return 1;
		}
		if (errno == EAGAIN)
			break;
	}
	return 0;
}

static void feed_stdin(struct supervise *s)
{
	const struct sb_job *job = s->job;
	while (s->in_off < job->code_len) {
		ssize_t w = write(s->sb->stdin_fd, job->code + s->in_off, job->code_len - s->in_off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			break; /* EPIPE: the sandbox stopped reading; its verdict says why */
		}
		s->in_off += (size_t)w;
	}
	sb_close(&s->sb->stdin_fd); /* EOF ends the code */
}

static void loop(struct supervise *s)
{
	int cancel_fd = s->hooks ? s->hooks->cancel_fd : -1;
	for (;;) {
		uint64_t now = sb_now_ms();
		if (s->sb->stdout_fd < 0 && s->sb->stderr_fd < 0 && (s->exited_at || s->killed))
			return;
		if (!s->killed && now >= s->deadline) {
			s->timed_out = true;
			kill_sandbox(s);
		}
		if (s->exited_at && !s->killed && now >= s->exited_at + EXIT_GRACE_MS)
			kill_sandbox(s);
		if (s->killed && now >= s->killed_at + KILL_GRACE_MS)
			return; /* pipes held open by something we cannot kill: give up on them */
		report_progress(s, now);

		struct pollfd p[5];
		int n = 0, i_in = -1, i_out = -1, i_err = -1, i_cancel = -1, i_pid = -1;
		if (s->sb->stdin_fd >= 0) { i_in = n; p[n++] = (struct pollfd){s->sb->stdin_fd, POLLOUT, 0}; }
		if (s->sb->stdout_fd >= 0) { i_out = n; p[n++] = (struct pollfd){s->sb->stdout_fd, POLLIN, 0}; }
		if (s->sb->stderr_fd >= 0) { i_err = n; p[n++] = (struct pollfd){s->sb->stderr_fd, POLLIN, 0}; }
		if (cancel_fd >= 0 && !s->cancelled) { i_cancel = n; p[n++] = (struct pollfd){cancel_fd, POLLIN, 0}; }
		if (s->pidfd >= 0 && !s->exited_at) { i_pid = n; p[n++] = (struct pollfd){s->pidfd, POLLIN, 0}; }

		uint64_t wake = s->killed ? s->killed_at + KILL_GRACE_MS : s->deadline;
		if (s->exited_at && !s->killed)
			wake = s->exited_at + EXIT_GRACE_MS;
		if (s->hooks && s->hooks->progress && s->next_progress < wake)
			wake = s->next_progress;
		int timeout = wake > now ? (int)(wake - now) : 0;
		int r = poll(p, (nfds_t)n, timeout);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			kill_sandbox(s);
			return;
		}
		if (i_in >= 0 && p[i_in].revents)
			feed_stdin(s);
		if (i_out >= 0 && p[i_out].revents)
			drain(s, &s->sb->stdout_fd, &s->out);
		if (i_err >= 0 && p[i_err].revents)
			drain(s, &s->sb->stderr_fd, &s->err);
		if (i_cancel >= 0 && p[i_cancel].revents) {
			s->cancelled = true;
			kill_sandbox(s);
		}
		if (i_pid >= 0 && p[i_pid].revents)
			s->exited_at = sb_now_ms();
	}
}

static void set_internal(struct sb_result *res, const struct sb_error *err)
{
	res->internal_error = strdup(err->msg[0] ? err->msg : "the sandbox failed");
	if (err->hint[0])
		res->hint = strdup(err->hint);
}

int sb_run_fresh(const struct sb_config *cfg, const struct sb_backend *be, const struct sb_job *job,
		 const struct sb_run_hooks *hooks, struct sb_result *res)
{
	const char *argv[8];
	sb_command_once(cfg, job->lang, argv);
	struct sb_sandbox sb = {.backend = be, .pid = -1, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1};
	struct sb_sandbox_req req = {.argv = argv, .limits = &job->limits, .lifetime_s = job->limits.timeout_s + 60};
	struct sb_error err = {0};
	struct supervise s = {.sb = &sb, .job = job, .hooks = hooks, .pidfd = -1};

	s.start = sb_now_ms();
	s.deadline = s.start + (uint64_t)job->limits.timeout_s * 1000;
	s.next_progress = s.start + (hooks && hooks->progress_interval_ms ? hooks->progress_interval_ms : 2000);
	if (sb_captures_init(&s.out, &s.err, job->limits.output_bytes)) {
		res->internal_error = strdup("out of memory");
		return 0;
	}

	if (sb_backend_spawn(be, &req, &sb, &err)) {
		set_internal(res, &err);
	} else {
		s.pidfd = (int)syscall(SYS_pidfd_open, sb.pid, 0);
		sb_set_nonblock(sb.stdin_fd, 1);
		sb_set_nonblock(sb.stdout_fd, 1);
		sb_set_nonblock(sb.stderr_fd, 1);
		loop(&s);
		sb_close(&s.pidfd);
		if (s.killed || sb.stdout_fd >= 0 || sb.stderr_fd >= 0)
			kill_sandbox(&s);
		sb_sandbox_close_fds(&sb);
		struct sb_exit ex = {.exit_code = -1};
		if (sb_backend_wait(&sb, &ex, &err)) {
			set_internal(res, &err);
		} else {
			res->exit_code = ex.exit_code;
			res->signal = ex.signal;
		}
		res->sandbox = sb.enforced;
		sb.enforced = NULL;
	}
	res->timed_out = s.timed_out;
	res->output_limit_exceeded = s.flooded;
	res->cancelled = s.cancelled;
	sb_result_forget_own_kill(res);
	sb_captures_finish(&s.out, &s.err, res);
	res->duration_ms = sb_now_ms() - s.start;
	return 0;
}
