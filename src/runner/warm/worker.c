#include "runner/warm/worker.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/proxy_control.h"
#include "runner/capture.h"
#include "runner/warm/command.h"
#include "runner/warm/driver_code.h"
#include "runner/pipes.h"
#include "util/clock.h"
#include "util/fd.h"

/* Sage's import takes seconds (minutes from a cold disk); a worker that is
 * not ready by then is broken. */
#define READY_TIMEOUT_MS 180000
/* The worker's stderr kept for error messages. */
#define DIAG_MAX 4096

enum sb_wkind sb_wkind_for(enum sb_lang lang)
{
	return lang == SB_LANG_SAGE ? SB_WKIND_SAGE : SB_WKIND_PLAIN;
}

const char *sb_wkind_name(enum sb_wkind k)
{
	return k == SB_WKIND_SAGE ? "sage" : "python";
}

uint64_t sb_wkind_allowance(enum sb_wkind k)
{
	/* Measured: a Sage 9.5 worker after its warm-ups (plot, Maxima) is
	 * about 350 MB resident; plain Python about 10 MB. */
	return k == SB_WKIND_SAGE ? 512ull << 20 : 64ull << 20;
}

void sb_worker_sandbox_limits(enum sb_wkind k, const struct sb_limits *l, struct sb_limits *out)
{
	*out = *l;
	out->memory_bytes = l->memory_bytes + sb_wkind_allowance(k);
	/* At most 8g + 512 MiB: "8704m" fits the field. */
	unsigned mib = (unsigned)((out->memory_bytes >> 20) % 1000000u);
	snprintf(out->memory, sizeof out->memory, "%um", mib);
}

struct sb_worker *sb_worker_new(enum sb_wkind kind, const struct sb_limits *job_limits)
{
	struct sb_worker *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->kind = kind;
	w->job_limits = *job_limits;
	sb_worker_sandbox_limits(kind, job_limits, &w->sb_limits);
	w->sb = (struct sb_sandbox){.pid = -1, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1};
	w->pidfd = -1;
	sb_wp_reader_init(&w->rd);
	snprintf(w->role, sizeof w->role, "the warm %s worker", sb_wkind_name(kind));
	return w;
}

struct sb_worker *sb_worker_new_fresh(enum sb_wkind kind, const struct sb_limits *job_limits)
{
	struct sb_worker *w = sb_worker_new(kind, job_limits);
	if (w) {
		w->fresh = true;
		w->sb_limits = *job_limits;
		/* The backend's backstop, should sagebox itself be gone. */
		w->lifetime_s = job_limits->timeout_s + sb_sup_policy.lifetime_margin_s;
	}
	return w;
}

int sb_worker_spawn(struct sb_worker *w, const struct sb_config *cfg, const struct sb_backend *be,
		    struct sb_error *err)
{
	snprintf(w->budget, sizeof w->budget, "%llu", (unsigned long long)(sb_wkind_allowance(w->kind) >> 20));
	const char *argv[12];
	/* kill(-1)-style cleanup between jobs only where the sandbox has its
	 * own pid namespace; the driver double-checks (it must be pid 1/2). */
	bool own_pidns = sb_backend_has(be, SB_CAP_OWN_PIDNS);
	if (w->fresh)
		sb_command_fresh(cfg, sb_wkind_name(w->kind), own_pidns, argv);
	else
		sb_command_worker(cfg, sb_wkind_name(w->kind), own_pidns, w->budget, argv);
	/* The backstop: recycled by then, plus the longest job and a minute. */
	struct sb_sandbox_req req = {.argv = argv, .limits = &w->sb_limits,
				     .lifetime_s = w->fresh ? w->lifetime_s
							    : cfg->worker_max_minutes * 60u + SB_TIMEOUT_MAX_S +
								      sb_sup_policy.lifetime_margin_s,
				     .cpu_per_job = true};
	return sb_worker_spawn_req(w, be, &req, err);
}

/* What the sandbox is, for the network audit. */
static const char *role_of(const struct sb_worker *w)
{
	if (w->fresh)
		return w->kind == SB_WKIND_SAGE ? "a fresh sage sandbox" : "a fresh python sandbox";
	return w->role;
}

void sb_worker_net_serves(const struct sb_worker *w, const char *owner, const char *what, const char *id)
{
	if (!w->net.id)
		return;
	char who[SB_PROXY_MSG_MAX];
	snprintf(who, sizeof who, "%s, client %s, %s%s%s", role_of(w), owner && owner[0] ? owner : "-", what,
		 id && id[0] ? " " : "", id ? id : "");
	sb_netproxy_who(&w->net, who);
}

int sb_worker_spawn_req(struct sb_worker *w, const struct sb_backend *be, const struct sb_sandbox_req *req,
			struct sb_error *err)
{
	w->spawned_ms = sb_now_ms();
	/* network set: a socket of the proxy's for this sandbox alone, so
	 * the audit knows every connection's sandbox (no-op without). */
	struct sb_sandbox_req r = *req;
	if (sb_netproxy_add(role_of(w), &w->net, err))
		return -1;
	r.net_dir = w->net.id ? w->net.dir : NULL;
	/* Backends that run the host's Python: its precompiled driver code,
	 * once made (the first sandboxes compile the driver themselves). */
	if (sb_backend_has(be, SB_CAP_HOST_FILES))
		r.driver_code = sb_driver_code_for(req->argv[0]);
	if (sb_spawn_piped(be, &r, &w->sb, &w->pidfd, err)) {
		sb_netproxy_del(&w->net);
		return -1;
	}
	w->spawned = true;
	return 0;
}

void sb_worker_kill(struct sb_worker *w)
{
	if (w->spawned)
		sb_backend_kill(&w->sb);
}

/* Whether the worker's command exits within ms (false without a pidfd). */
static bool exits_within(struct sb_worker *w, unsigned ms)
{
	if (w->pidfd < 0 || !ms)
		return false;
	sb_close(&w->sb.stdin_fd); /* it has nothing more to read */
	uint64_t end = sb_now_ms() + ms;
	for (;;) {
		uint64_t now = sb_now_ms();
		struct pollfd p = {w->pidfd, POLLIN, 0};
		int r = poll(&p, 1, now >= end ? 0 : (int)(end - now));
		if (r > 0)
			return true;
		if (r == 0 || errno != EINTR)
			return false;
	}
}

void sb_worker_destroy(struct sb_worker *w)
{
	sb_worker_destroy_after(w, 0);
}

void sb_worker_destroy_after(struct sb_worker *w, unsigned grace_ms)
{
	if (!w)
		return;
	if (w->spawned) {
		if (!exits_within(w, grace_ms))
			sb_backend_kill(&w->sb);
		sb_sandbox_close_fds(&w->sb);
		struct sb_exit ex;
		struct sb_error err = {0};
		sb_backend_wait(&w->sb, &ex, &err);
		json_decref(w->sb.enforced);
	}
	sb_netproxy_del(&w->net);
	sb_close(&w->pidfd);
	sb_wp_reader_free(&w->rd);
	sb_buf_free(&w->diag);
	json_decref(w->ready);
	free(w);
}

static int keep_diag(void *ctx, const char *p, size_t n)
{
	struct sb_worker *w = ctx;
	if (w->diag.len + n > DIAG_MAX * 2) {
		size_t keep = w->diag.len > DIAG_MAX ? DIAG_MAX : w->diag.len;
		memmove(w->diag.data, w->diag.data + w->diag.len - keep, keep);
		w->diag.len = keep;
	}
	sb_buf_append(&w->diag, p, n);
	return 0;
}

/* Keep the last DIAG_MAX bytes of the worker's stderr. Returns 1 at EOF. */
int sb_worker_drain_diag(struct sb_worker *w)
{
	return sb_pipe_drain(&w->sb.stderr_fd, 16, keep_diag, w);
}

/* The last line of the worker's stderr, for an error message. */
static void diag_last(const struct sb_worker *w, char *out, size_t n)
{
	out[0] = '\0';
	if (!w->diag.len)
		return;
	size_t end = w->diag.len;
	while (end && (w->diag.data[end - 1] == '\n' || w->diag.data[end - 1] == ' '))
		end--;
	size_t start = end;
	while (start && w->diag.data[start - 1] != '\n')
		start--;
	snprintf(out, n, "%.*s", (int)(end - start > 400 ? 400 : end - start), w->diag.data + start);
}

static int to_reader(void *ctx, const char *p, size_t n)
{
	struct sb_worker *w = ctx;
	if (sb_wp_reader_feed(&w->rd, p, n))
		return -1;
	/* Never buffer more than one maximal frame ahead: a worker cannot
	 * make the host hold gigabytes. */
	return w->rd.in.len - w->rd.off > 2 * (SB_WP_MAX_IN + 4) ? 1 : 0;
}

/* Read what the worker sent. Returns 1 at EOF, -1 on error. */
int sb_worker_read(struct sb_worker *w)
{
	return sb_pipe_drain(&w->sb.stdout_fd, 16, to_reader, w);
}

void sb_worker_died_how(struct sb_worker *w, char *out, size_t n)
{
	char last[512];
	sb_worker_drain_diag(w);
	diag_last(w, last, sizeof last);
	/* A sandbox that ran out of memory may die without a word (filling
	 * /tmp and /dev/shm, which are memory, leaves no process able to
	 * say it): the kernel's own count tells. Read now, before the wait
	 * removes the cgroup. */
	long oom = w->spawned ? sb_backend_oom_kills(&w->sb) : -1;
	w->out_of_memory |= oom > 0;
	if (oom > 0)
		snprintf(out, n,
			 "it ran out of memory: the kernel killed %ld of its processes at its memory limit of %llu MiB "
			 "(files in /tmp and /dev/shm count against it)%s%s",
			 oom, (unsigned long long)(w->sb_limits.memory_bytes >> 20), last[0] ? "; it said: " : "", last);
	else if (last[0])
		snprintf(out, n, "it said: %s", last);
	else
		snprintf(out, n, "it exited without a word");
}

int sb_worker_wait_ready(struct sb_worker *w, struct sb_error *err)
{
	uint64_t deadline = sb_now_ms() + READY_TIMEOUT_MS;
	char why[256];
	for (;;) {
		struct sb_wp_frame f;
		int r = sb_wp_reader_next(&w->rd, &f, why, sizeof why);
		if (r < 0) {
			sb_worker_kill(w);
			return sb_fail(err, "%s broke the protocol while starting: %s", w->role, why);
		}
		if (r > 0) {
			if (f.type != SB_WP_READY) {
				sb_worker_kill(w);
				return sb_fail(err, "%s sent a frame before it was ready", w->role);
			}
			w->ready = json_incref(f.hdr);
			json_int_t pid = json_integer_value(json_object_get(f.hdr, "pid"));
			snprintf(w->pid_inside, sizeof w->pid_inside, "%" JSON_INTEGER_FORMAT, pid);
			w->ready_ms = sb_now_ms();
			return 0;
		}
		uint64_t now = sb_now_ms();
		if (now >= deadline) {
			sb_worker_kill(w);
			return sb_fail(err, "%s was not ready after %d s", w->role, READY_TIMEOUT_MS / 1000);
		}
		if (w->sb.stdout_fd < 0) {
			char how[600];
			sb_worker_died_how(w, how, sizeof how);
			sb_worker_kill(w);
			sb_fail(err, "%s exited while starting (%s)", w->role, how);
			return sb_hint(err, "run 'sagebox status' and 'sagebox run --isolation fresh' to see whether the "
					    "sandbox itself works");
		}
		struct pollfd p[2] = {{w->sb.stdout_fd, POLLIN, 0}, {w->sb.stderr_fd, POLLIN, 0}};
		int rc = poll(p, w->sb.stderr_fd >= 0 ? 2 : 1, (int)(deadline - now));
		if (rc < 0 && errno != EINTR) {
			sb_worker_kill(w);
			return sb_fail_errno(err, "poll");
		}
		if (rc > 0 && p[0].revents && sb_worker_read(w) < 0) {
			sb_worker_kill(w);
			return sb_fail(err, "out of memory");
		}
		if (rc > 0 && w->sb.stderr_fd >= 0 && p[1].revents)
			sb_worker_drain_diag(w);
	}
}

bool sb_worker_idle_ok(struct sb_worker *w)
{
	if (!w->spawned || w->sb.stdout_fd < 0 || w->sb.stdin_fd < 0)
		return false;
	/* An idle worker sends nothing: readable stdout is EOF or chatter. */
	struct pollfd p[2] = {{w->sb.stdout_fd, POLLIN, 0}, {w->pidfd, POLLIN, 0}};
	int n = poll(p, w->pidfd >= 0 ? 2 : 1, 0);
	if (n != 0)
		return false;
	if (w->sb.stderr_fd >= 0)
		sb_worker_drain_diag(w);
	return w->rd.in.len == w->rd.off;
}

json_t *sb_worker_status(const struct sb_worker *w, uint64_t now)
{
	json_t *o = json_pack("{s:s, s:i, s:I}", "kind", sb_wkind_name(w->kind), "jobs", (int)w->jobs, "age_s",
			      (json_int_t)((now - w->spawned_ms) / 1000));
	if (w->ready) {
		json_object_set_new(o, "ready_after_ms", json_integer((json_int_t)(w->ready_ms - w->spawned_ms)));
		json_object_set(o, "sage", json_object_get(w->ready, "sage"));
		json_object_set(o, "python", json_object_get(w->ready, "python"));
		/* "precompiled" or "compiled" (runner/warm/driver_code.h) */
		if (json_object_get(w->ready, "driver_code"))
			json_object_set(o, "driver_code", json_object_get(w->ready, "driver_code"));
		/* "huge pages", or "CPython's own: <why>" (driver/memory.py huge_arenas) */
		if (json_object_get(w->ready, "object_arenas"))
			json_object_set(o, "object_arenas", json_object_get(w->ready, "object_arenas"));
	}
	json_object_set_new(o, "sandbox_memory", json_string(w->sb_limits.memory));
	return o;
}
