/* Fresh isolation: one new sandbox per job. Its feeder is the sandbox's
 * raw pipes: the code is written to stdin (EOF ends it), stdout and stderr
 * go to the supervisor, a pidfd says when the command exited. No soft stop:
 * timeout, flood and cancel kill the whole sandbox through the backend. */
#include "runner/fresh.h"

#include <stdlib.h>
#include <string.h>

#include "runner/command.h"
#include "runner/pipes.h"
#include "util/clock.h"
#include "util/fd.h"

struct pipes_feeder {
	struct sb_feeder f; /* first: the supervisor's view */
	struct sb_sandbox *sb;
	struct sb_sup *sup;
	const struct sb_job *job;
	size_t in_off;
	int pidfd;
};

static struct pipes_feeder *pf(const struct sb_feeder *f)
{
	return (struct pipes_feeder *)f;
}

static int pf_fds(struct sb_feeder *f, struct sb_sup *s, struct pollfd *p)
{
	struct pipes_feeder *x = pf(f);
	int n = 0;
	/* Slot order is fixed (-1 is skipped by poll): pf_ready relies on it. */
	p[n++] = (struct pollfd){x->sb->stdin_fd, POLLOUT, 0};
	p[n++] = (struct pollfd){x->sb->stdout_fd, POLLIN, 0};
	p[n++] = (struct pollfd){x->sb->stderr_fd, POLLIN, 0};
	p[n++] = (struct pollfd){s->exited_at ? -1 : x->pidfd, POLLIN, 0};
	return n;
}

static int to_stdout(void *ctx, const char *p, size_t n)
{
	sb_sup_output(((struct pipes_feeder *)ctx)->sup, SB_STREAM_STDOUT, p, n);
	return 0;
}

static int to_stderr(void *ctx, const char *p, size_t n)
{
	sb_sup_output(((struct pipes_feeder *)ctx)->sup, SB_STREAM_STDERR, p, n);
	return 0;
}

static void pf_ready(struct sb_feeder *f, struct sb_sup *s, const struct pollfd *p, int n)
{
	struct pipes_feeder *x = pf(f);
	(void)n;
	if (p[0].revents) {
		/* EPIPE: the sandbox stopped reading; its verdict says why. */
		sb_pipe_write(&x->sb->stdin_fd, x->job->code, x->job->code_len, &x->in_off);
		if (x->in_off == x->job->code_len)
			sb_close(&x->sb->stdin_fd); /* EOF ends the code */
	}
	if (p[1].revents)
		sb_pipe_drain(&x->sb->stdout_fd, 16, to_stdout, x);
	if (p[2].revents)
		sb_pipe_drain(&x->sb->stderr_fd, 16, to_stderr, x);
	if (p[3].revents)
		sb_sup_exited(s);
	if (x->sb->stdout_fd < 0 && x->sb->stderr_fd < 0 && s->exited_at)
		sb_sup_finish(s);
}

static void pf_hard_kill(struct sb_feeder *f)
{
	struct sb_sandbox *sb = pf(f)->sb;
	sb_backend_kill(sb);
}

static bool pf_drained(const struct sb_feeder *f)
{
	return pf(f)->sb->stdout_fd < 0 && pf(f)->sb->stderr_fd < 0;
}

static const struct sb_feeder_ops pipes_ops = {
	.fds = pf_fds,
	.ready = pf_ready,
	.soft_stop = NULL,
	.hard_kill = pf_hard_kill,
	.drained = pf_drained,
};

static void set_internal(struct sb_result *res, const struct sb_error *err)
{
	if (res->internal_error)
		return;
	res->internal_error = strdup(err->msg[0] ? err->msg : "the sandbox failed");
	if (err->hint[0])
		res->hint = strdup(err->hint);
}

int sb_run_fresh(const struct sb_config *cfg, const struct sb_backend *be, const struct sb_job *job,
		 const struct sb_run_hooks *hooks, struct sb_sink *sink, struct sb_result *res)
{
	const char *argv[8];
	sb_command_once(cfg, job->lang, argv);
	struct sb_sandbox sb = {.backend = be, .pid = -1, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1};
	/* The backend's backstop, should sagebox itself be gone. */
	struct sb_sandbox_req req = {.argv = argv, .limits = &job->limits,
				     .lifetime_s = job->limits.timeout_s + sb_sup_policy.lifetime_margin_s};
	struct pipes_feeder x = {.f = {.ops = &pipes_ops}, .sb = &sb, .job = job};
	struct sb_error err = {0};
	struct sb_sup s;

	sb_sup_init(&s, &x.f, sink, (uint64_t)job->limits.timeout_s * 1000, hooks, NULL);
	x.sup = &s;
	if (sb_spawn_piped(be, &req, &sb, &x.pidfd, &err)) {
		set_internal(res, &err);
	} else {
		sb_sup_run(&s);
		sb_close(&x.pidfd);
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
	sb_sup_verdict(&s, res);
	res->duration_ms = sb_now_ms() - s.start;
	return 0;
}
