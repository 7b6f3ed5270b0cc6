#include "runner/supervise.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/display_caps.h"
#include "util/clock.h"

const struct sb_sup_policy sb_sup_policy = {
	.exit_grace_ms = 300,
	.kill_grace_ms = 3000,
	.soft_stop_grace_ms = 1500,
	.self_timed_grace_ms = 2000,
	.progress_interval_ms = 2000,
	.progress_tail_bytes = 2048,
	.flood_factor = 8,
	.lifetime_margin_s = 60,
};

enum {
	F_ENDED = 1u << 0,
	F_TIMED_OUT = 1u << 1,
	F_CANCELLED = 1u << 2,
	F_FLOODED = 1u << 3,
	F_STOPPING = 1u << 4,
	F_KILLED = 1u << 5,
};

static void publish(struct sb_sup *s, unsigned flag)
{
	atomic_fetch_or_explicit(&s->flags, flag, memory_order_release);
}

static unsigned progress_interval(const struct sb_sup *s)
{
	return s->hooks && s->hooks->progress_interval_ms ? s->hooks->progress_interval_ms
							   : s->policy->progress_interval_ms;
}

void sb_sup_init(struct sb_sup *s, struct sb_feeder *f, struct sb_sink *k, uint64_t timeout_ms,
		 const struct sb_run_hooks *hooks, const struct sb_sup_policy *policy)
{
	memset(s, 0, sizeof *s);
	s->feeder = f;
	s->sink = k;
	s->hooks = hooks;
	s->policy = policy ? policy : &sb_sup_policy;
	s->start = sb_now_ms();
	s->deadline = s->start + timeout_ms + (f->self_timed ? s->policy->self_timed_grace_ms : 0);
	s->next_progress = s->start + progress_interval(s);
	for (int i = 0; i < SB_STREAMS; i++)
		atomic_init(&s->total[i], 0);
	atomic_init(&s->flags, 0);
	atomic_init(&s->ended_ms, 0);
}

void sb_sup_kill(struct sb_sup *s)
{
	if (s->killed)
		return;
	s->feeder->ops->hard_kill(s->feeder);
	s->killed = true;
	s->killed_at = sb_now_ms();
	publish(s, F_KILLED);
}

/* Stop the job for a verdict: softly when allowed and the feeder can, the
 * hard kill following after the soft-stop grace; else at once. */
static void stop(struct sb_sup *s, bool soft_ok)
{
	if (s->killed)
		return;
	if (!soft_ok || !s->feeder->ops->soft_stop) {
		sb_sup_kill(s);
		return;
	}
	if (s->soft_at)
		return;
	s->feeder->ops->soft_stop(s->feeder, s);
	s->soft_at = sb_now_ms();
	publish(s, F_STOPPING);
}

void sb_sup_output(struct sb_sup *s, enum sb_stream_id st, const char *p, size_t n)
{
	uint64_t total = atomic_load_explicit(&s->total[st], memory_order_relaxed) + n;
	atomic_store_explicit(&s->total[st], total, memory_order_relaxed);
	if (s->sink->ops->write(s->sink, st, p, n)) {
		sb_sup_broken(s, "its output could not be kept (out of memory, or no room on disk for a job's log)");
		return;
	}
	/* The host's own flood limit, whatever the far side does. */
	if (total > sb_sink_flood_bytes(s->sink, st) && !s->flooded) {
		s->flooded = true;
		publish(s, F_FLOODED);
		stop(s, true);
	}
}

static const struct {
	const char *name;
	enum sb_stream_id id;
} stream_names[] = {
	{"stdout", SB_STREAM_STDOUT},
	{"stderr", SB_STREAM_STDERR},
	{"display", SB_STREAM_DISPLAY},
};

int sb_stream_by_name(const char *name)
{
	for (size_t i = 0; name && i < sizeof stream_names / sizeof *stream_names; i++)
		if (!strcmp(name, stream_names[i].name))
			return (int)stream_names[i].id;
	return -1;
}

uint64_t sb_sink_flood_bytes(const struct sb_sink *k, enum sb_stream_id st)
{
	if (st != SB_STREAM_DISPLAY)
		return k->flood_bytes;
	uint64_t most = 0;
	for (int c = 0; c < SB_DCLASSES; c++)
		most += sb_display_classes[c].caps.max_total_bytes;
	return most * sb_sup_policy.flood_factor;
}

void sb_sup_exited(struct sb_sup *s)
{
	if (!s->exited_at)
		s->exited_at = sb_now_ms();
}

void sb_sup_finish(struct sb_sup *s)
{
	s->finished = true;
}

void sb_sup_broken(struct sb_sup *s, const char *fmt, ...)
{
	if (!s->broken[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->broken, sizeof s->broken, fmt, ap);
		va_end(ap);
	}
	sb_sup_kill(s);
}

static void report_progress(struct sb_sup *s, uint64_t now)
{
	const struct sb_run_hooks *h = s->hooks;
	if (!h || !h->progress || now < s->next_progress)
		return;
	s->next_progress = now + progress_interval(s);
	size_t tl = 0;
	char *tail = s->sink->ops->tail(s->sink, s->policy->progress_tail_bytes, &tl);
	struct sb_progress p = {
		.elapsed_ms = now - s->start,
		.stdout_bytes = atomic_load_explicit(&s->total[SB_STREAM_STDOUT], memory_order_relaxed),
		.stderr_bytes = atomic_load_explicit(&s->total[SB_STREAM_STDERR], memory_order_relaxed),
		.stdout_tail = tail ? tail : "",
		.stdout_tail_len = tail ? tl : 0,
	};
	h->progress(h->ctx, &p);
	free(tail);
}

/* The clocks: deadline, soft-stop grace, exit grace. */
static void check_clocks(struct sb_sup *s, uint64_t now)
{
	const struct sb_sup_policy *pol = s->policy;
	if (!s->killed && !s->timed_out && now >= s->deadline) {
		s->timed_out = true;
		publish(s, F_TIMED_OUT);
		/* A self-timed far side had its chance: the backstop is hard. */
		stop(s, !s->feeder->self_timed);
	}
	if (!s->killed && s->soft_at && now >= s->soft_at + pol->soft_stop_grace_ms)
		sb_sup_kill(s);
	if (!s->killed && s->exited_at && now >= s->exited_at + pol->exit_grace_ms)
		sb_sup_kill(s);
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* When the next clock is due. */
static uint64_t next_wake(const struct sb_sup *s)
{
	const struct sb_sup_policy *pol = s->policy;
	uint64_t wake = UINT64_MAX;
	if (s->killed) {
		wake = s->killed_at + pol->kill_grace_ms;
	} else {
		if (!s->timed_out)
			wake = s->deadline;
		if (s->soft_at)
			wake = min64(wake, s->soft_at + pol->soft_stop_grace_ms);
		if (s->exited_at)
			wake = min64(wake, s->exited_at + pol->exit_grace_ms);
	}
	if (s->hooks && s->hooks->progress)
		wake = min64(wake, s->next_progress);
	return wake;
}

static bool over(struct sb_sup *s, uint64_t now)
{
	if (s->finished)
		return true;
	return s->killed && (s->feeder->ops->drained(s->feeder) || now >= s->killed_at + s->policy->kill_grace_ms);
}

void sb_sup_run(struct sb_sup *s)
{
	struct sb_feeder *f = s->feeder;
	const struct sb_run_hooks *h = s->hooks;
	int cancel_fd = h ? h->cancel_fd : -1;
	if (h && h->watch)
		h->watch(h->ctx, s);
	for (;;) {
		uint64_t now = sb_now_ms();
		if (over(s, now))
			break;
		check_clocks(s, now);
		report_progress(s, now);

		struct pollfd p[SB_FEED_MAX_FDS + 1];
		int n = f->ops->fds(f, s, p), i_cancel = -1;
		if (cancel_fd >= 0 && !s->cancelled && !s->killed) {
			i_cancel = n;
			p[n] = (struct pollfd){cancel_fd, POLLIN, 0};
		}
		uint64_t wake = next_wake(s);
		int timeout = wake <= now ? 0 : wake - now > INT_MAX ? INT_MAX : (int)(wake - now);
		int r = poll(p, (nfds_t)(n + (i_cancel >= 0)), timeout);
		if (r < 0) {
			if (errno == EINTR)
				continue; /* the clocks are checked again */
			sb_sup_broken(s, "poll failed: %s", strerror(errno));
			break;
		}
		if (r > 0)
			f->ops->ready(f, s, p, n);
		if (i_cancel >= 0 && p[i_cancel].revents && !s->cancelled) {
			s->cancelled = true;
			publish(s, F_CANCELLED);
			stop(s, true);
		}
	}
	atomic_store_explicit(&s->ended_ms, sb_now_ms(), memory_order_relaxed);
	publish(s, F_ENDED);
	if (h && h->watch)
		h->watch(h->ctx, NULL);
}

void sb_sup_status(const struct sb_sup *s, struct sb_sup_status *st)
{
	unsigned fl = atomic_load_explicit(&s->flags, memory_order_acquire);
	uint64_t end = atomic_load_explicit(&s->ended_ms, memory_order_relaxed);
	*st = (struct sb_sup_status){
		.running = !(fl & F_ENDED),
		.elapsed_ms = (end ? end : sb_now_ms()) - s->start,
		.stdout_bytes = atomic_load_explicit(&s->total[SB_STREAM_STDOUT], memory_order_relaxed),
		.stderr_bytes = atomic_load_explicit(&s->total[SB_STREAM_STDERR], memory_order_relaxed),
		.timed_out = fl & F_TIMED_OUT,
		.cancelled = fl & F_CANCELLED,
		.flooded = fl & F_FLOODED,
		.stopping = fl & F_STOPPING,
		.killed = fl & F_KILLED,
	};
}

void sb_sup_verdict(const struct sb_sup *s, struct sb_result *res)
{
	res->timed_out |= s->timed_out;
	res->output_limit_exceeded |= s->flooded;
	res->cancelled |= s->cancelled;
	res->out_of_memory |= s->out_of_memory && s->broken[0];
	/* The host's own deadline, cancel or flood kill is a verdict; any
	 * other failure is the sandbox failing, said as such. */
	if (s->broken[0] && !s->timed_out && !s->cancelled && !s->flooded && !res->internal_error)
		res->internal_error = strdup(s->broken);
	sb_result_forget_own_kill(res);
}
