#include "runner/sessions/sess.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "runner/warm/command.h"
#include "sandbox/sandbox.h"
#include "util/clock.h"
#include "util/fd.h"

/* Frames waiting for one reader: past this the controller is flooding a
 * request nobody reads, and the session is ended. */
#define INBOX_MAX (64u << 20)
/* A write to the controller that makes no progress for this long: it is
 * stuck (or stopped), and the session is ended. */
#define TX_STALL_MS 30000

static void wake(struct sess_inbox *in)
{
	uint64_t one = 1;
	(void)SB_RETRY_EINTR(write(in->efd, &one, sizeof one));
}

bool sess_dead(struct sess *s, char *why, size_t n)
{
	pthread_mutex_lock(&s->lock);
	bool dead = s->dead;
	if (dead && why)
		snprintf(why, n, "%s", s->why);
	pthread_mutex_unlock(&s->lock);
	return dead;
}

/* Under s->lock. */
static void end_locked(struct sess *s, bool closed, const char *why)
{
	if (s->dead)
		return;
	s->dead = true;
	s->closed = closed;
	snprintf(s->why, sizeof s->why, "%s", why);
	for (struct sess_inbox *in = s->routes; in; in = in->next)
		wake(in);
	pthread_cond_broadcast(&s->changed);
}

void sess_kill(struct sess *s, bool closed, const char *fmt, ...)
{
	char why[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&s->lock);
	end_locked(s, closed, why);
	pthread_mutex_unlock(&s->lock);
	/* The whole sandbox: a pid namespace (or container) of its own, so
	 * every process of the session dies, setsid'd grandchildren too. */
	sb_worker_kill(s->w);
}

void sess_ended_error(struct sess *s, struct sb_error *err)
{
	char why[400];
	sess_dead(s, why, sizeof why);
	sb_fail(err, "session %s ended: %s", s->id, why);
	sb_hint(err, "its variables and files are gone; open a new session with session_open");
}

/* ---- the pump */
void sess_deliver(struct sess *s, const struct sb_wp_frame *f)
{
	json_t *idv = json_object_get(f->hdr, "id");
	if (!json_is_integer(idv)) {
		sess_kill(s, false, "its controller broke the protocol (a frame without an id)");
		return;
	}
	pthread_mutex_lock(&s->lock);
	struct sess_inbox *in = s->routes;
	while (in && in->id != json_integer_value(idv))
		in = in->next;
	struct sess_frame *fr = in ? malloc(sizeof *fr + f->payload_len) : NULL;
	if (fr) {
		fr->next = NULL;
		fr->type = f->type;
		fr->hdr = json_incref(f->hdr);
		fr->n = f->payload_len;
		memcpy(fr->payload, f->payload, f->payload_len);
		*(in->tail ? &in->tail->next : &in->head) = fr;
		in->tail = fr;
		in->queued += f->payload_len;
		wake(in);
	}
	/* A held inbox's reader is busy with the frames (a sync writing
	 * them to disk): wait for it, not ending the session, until it has
	 * taken enough, left, or the session ended. */
	while (in && in->held && in->queued > SESS_INBOX_HOLD && !s->dead) {
		sb_cond_wait_ms(&s->changed, &s->lock, 1000);
		for (in = s->routes; in && in->id != json_integer_value(idv);)
			in = in->next;
	}
	bool flood = in && in->queued > INBOX_MAX;
	pthread_mutex_unlock(&s->lock);
	if (flood)
		sess_kill(s, false, "its controller sent more than %u MiB nobody read", INBOX_MAX >> 20);
	/* (a frame for an id nobody waits for any more is dropped) */
}

static void *pump_main(void *arg)
{
	struct sess *s = arg;
	struct sb_worker *w = s->w;
	char why[700] = "";
	while (w->sb.stdout_fd >= 0) {
		struct pollfd p[2] = {{w->sb.stdout_fd, POLLIN, 0}, {w->sb.stderr_fd, POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(why, sizeof why, "poll: %s", strerror(errno));
			break;
		}
		if (p[1].revents)
			sb_worker_drain_diag(w);
		if (p[0].revents && sb_worker_read(w) < 0) {
			snprintf(why, sizeof why, "out of memory reading its controller");
			break;
		}
		struct sb_wp_frame f;
		char bad[256];
		int r;
		while ((r = sb_wp_reader_next(&w->rd, &f, bad, sizeof bad)) > 0) {
			if (f.type == SB_WP_READY) {
				r = -1;
				snprintf(bad, sizeof bad, "a second ready frame");
				break;
			}
			sess_deliver(s, &f);
		}
		if (r < 0) {
			snprintf(why, sizeof why, "its controller broke the protocol (%s)", bad);
			break;
		}
	}
	if (!why[0]) {
		char how[600];
		sb_worker_died_how(w, how, sizeof how);
		snprintf(why, sizeof why, "its sandbox ended (%.600s)", how);
	}
	sess_kill(s, false, "%s", why);
	return NULL;
}

/* ---- start and end */
/* The limits the interpreter holds itself to, for the controller's argv. */
static char *interp_limits(const struct sb_limits *l, enum sb_lang lang)
{
	/* warm_mib: what the controller may use for itself (its warm-ups
	 * stop short of it), the allowance its sandbox has on top of the
	 * job's memory. */
	json_t *o = json_pack("{s:I, s:I, s:I, s:I}", "memory_bytes", (json_int_t)l->memory_bytes, "nofile",
			      (json_int_t)l->nofile, "fsize_bytes", (json_int_t)l->fsize_bytes, "warm_mib",
			      (json_int_t)(sb_wkind_allowance(sb_wkind_for(lang)) >> 20));
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

struct sess *sess_spawn(const struct sb_config *cfg, const struct sb_backend *be, enum sb_lang lang,
			unsigned lifetime_s, uint64_t workspace_bytes, struct sb_error *err)
{
	struct sess *s = calloc(1, sizeof *s);
	char *limits = interp_limits(&cfg->limits, lang);
	if (!s || !limits || !(s->w = sb_worker_new(sb_wkind_for(lang), &cfg->limits))) {
		free(s);
		free(limits);
		sb_fail(err, "out of memory");
		return NULL;
	}
	s->lang = lang;
	pthread_mutex_init(&s->lock, NULL);
	sb_cond_init(&s->changed);
	pthread_mutex_init(&s->tx, NULL);
	s->w->rd.types = SB_WP_SESSION_TYPES;
	snprintf(s->w->role, sizeof s->w->role, "a %s session's sandbox", sb_lang_name(lang));
	const char *argv[12];
	bool own_pidns = sb_backend_has(be, SB_CAP_OWN_PIDNS);
	sb_command_session(cfg, lang, own_pidns, sb_backend_has(be, SB_CAP_ISOLATED) ? SB_SANDBOX_WORKSPACE : "-",
			   limits, argv);
	struct sb_sandbox_req req = {.argv = argv, .limits = &s->w->sb_limits, .lifetime_s = lifetime_s,
				     .workspace_bytes = workspace_bytes ? workspace_bytes : cfg->workspace_bytes,
				     .project_dir = sess_project_bound(cfg, be) ? cfg->project_dir : NULL,
				     .project_exec = cfg->project_exec,
				     /* the most jobs one client (its owner) may run at once */
				     .job_slots = cfg->max_jobs};
	int rc = sb_worker_spawn_req(s->w, be, &req, err);
	free(limits);
	if (rc || sb_worker_wait_ready(s->w, err)) {
		sess_destroy(s);
		return NULL;
	}
	s->created_ms = sb_now_ms();
	atomic_store(&s->used_ms, s->created_ms);
	if (pthread_create(&s->pump, NULL, pump_main, s) != 0) {
		sb_fail(err, "cannot start a thread");
		sess_destroy(s);
		return NULL;
	}
	s->pump_started = true;
	return s;
}

void sess_destroy(struct sess *s)
{
	if (!s)
		return;
	sess_kill(s, true, "it was closed");
	if (s->pump_started)
		pthread_join(s->pump, NULL);
	sb_worker_destroy(s->w);
	while (s->routes) /* (routes left by nobody: none normally) */
		sess_unroute(s, s->routes);
	pthread_mutex_destroy(&s->tx);
	pthread_cond_destroy(&s->changed);
	pthread_mutex_destroy(&s->lock);
	json_decref(s->interacts);
	free(s);
}

/* ---- inboxes */
int sess_route(struct sess *s, struct sess_inbox *in)
{
	memset(in, 0, sizeof *in);
	in->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (in->efd < 0)
		return -1;
	pthread_mutex_lock(&s->lock);
	in->id = ++s->next_id;
	in->next = s->routes;
	s->routes = in;
	if (s->dead)
		wake(in);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void sess_frame_free(struct sess_frame *f)
{
	if (f) {
		json_decref(f->hdr);
		free(f);
	}
}

/* The inbox's eventfd is readable exactly while frames wait (or the session
 * ended): only taking the last frame clears it, under the lock that
 * delivering takes. A waiter that cleared it itself and took one frame of
 * several would leave the rest unseen by its next poll (a job's first output
 * came with its started frame, and sat in the inbox until the job ended). */
struct sess_frame *sess_pop(struct sess *s, struct sess_inbox *in)
{
	pthread_mutex_lock(&s->lock);
	struct sess_frame *f = in->head;
	if (f) {
		in->head = f->next;
		if (!in->head)
			in->tail = NULL;
		in->queued -= f->n;
		if (in->held)
			pthread_cond_broadcast(&s->changed); /* (the pump may wait for room) */
	}
	if (!in->head && !s->dead) {
		uint64_t v;
		(void)SB_RETRY_EINTR(read(in->efd, &v, sizeof v)); /* (EAGAIN: it was clear) */
	}
	pthread_mutex_unlock(&s->lock);
	return f;
}

void sess_unroute(struct sess *s, struct sess_inbox *in)
{
	pthread_mutex_lock(&s->lock);
	for (struct sess_inbox **pp = &s->routes; *pp; pp = &(*pp)->next)
		if (*pp == in) {
			*pp = in->next;
			break;
		}
	pthread_cond_broadcast(&s->changed); /* (a pump waiting for this inbox goes on) */
	pthread_mutex_unlock(&s->lock);
	while (in->head) {
		struct sess_frame *f = in->head;
		in->head = f->next;
		sess_frame_free(f);
	}
	in->tail = NULL;
	sb_close(&in->efd);
}

int sess_wait(struct sess_inbox *in, int cancel_fd, int timeout_ms)
{
	struct pollfd p[2] = {{in->efd, POLLIN, 0}, {cancel_fd, POLLIN, 0}};
	int n = SB_RETRY_EINTR(poll(p, 2, timeout_ms));
	return n > 0 && p[1].revents ? 1 : 0;
}

/* ---- sending */
static int write_all(struct sess *s, const char *p, size_t n)
{
	int fd = s->w->sb.stdin_fd;
	size_t off = 0;
	while (off < n) {
		if (fd < 0)
			return -1;
		ssize_t k = SB_RETRY_EINTR(write(fd, p + off, n - off));
		if (k > 0) {
			off += (size_t)k;
			continue;
		}
		if (k < 0 && errno != EAGAIN)
			return -1;
		struct pollfd pf = {fd, POLLOUT, 0};
		if (SB_RETRY_EINTR(poll(&pf, 1, TX_STALL_MS)) <= 0)
			return -1;
	}
	return 0;
}

int sess_send(struct sess *s, json_t *hdr, const void *raw, size_t n)
{
	SB_AUTO_BUF b = {0};
	int rc = !hdr || sb_wp_encode(&b, hdr, NULL, 0) ? -1 : 0;
	json_decref(hdr);
	if (rc || sess_dead(s, NULL, 0))
		return -1;
	pthread_mutex_lock(&s->tx);
	rc = write_all(s, b.data, b.len);
	if (!rc && n)
		rc = write_all(s, raw, n);
	pthread_mutex_unlock(&s->tx);
	if (rc)
		sess_kill(s, false, "its controller stopped reading");
	return rc;
}

int sess_request(struct sess *s, json_t *hdr, const void *raw, size_t n, int timeout_ms, unsigned flags,
		 int (*on_data)(void *ctx, const char *p, size_t n), void *ctx, json_t **reply, struct sb_error *err)
{
	struct sess_inbox in;
	*reply = NULL;
	if (!hdr || sess_route(s, &in)) {
		json_decref(hdr);
		return sb_fail(err, "out of memory");
	}
	json_object_set_new(hdr, "id", json_integer(in.id));
	int rc = sess_send(s, hdr, raw, n);
	uint64_t deadline = sb_now_ms() + (uint64_t)timeout_ms;
	bool failed = false;
	while (!rc && !*reply && !failed) {
		struct sess_frame *f = sess_pop(s, &in);
		if (!f) {
			uint64_t now = sb_now_ms();
			if (sess_dead(s, NULL, 0) || now >= deadline)
				break;
			sess_wait(&in, -1, (int)(deadline - now));
			continue;
		}
		if (f->type == SB_WP_DATA && on_data)
			failed = on_data(ctx, f->payload, f->n) != 0;
		else if (f->type == SB_WP_REPLY)
			*reply = json_incref(f->hdr);
		sess_frame_free(f);
	}
	sess_unroute(s, &in);
	if (*reply)
		return 0;
	if (failed)
		return sb_fail(err, "out of memory");
	if (sess_dead(s, NULL, 0)) {
		sess_ended_error(s, err);
		return -1;
	}
	if (flags & SESS_MAY_WAIT)
		return sb_fail(err, "session %s did not answer within %d ms", s->id, timeout_ms);
	sess_kill(s, false, "its controller did not answer within %d s", timeout_ms / 1000);
	sess_ended_error(s, err);
	return -1;
}

/* ---- the interpreter's turn */
int sess_take(struct sess *s, int cancel_fd, struct sb_error *err)
{
	pthread_mutex_lock(&s->lock);
	while (s->busy && !s->dead) {
		sb_cond_wait_ms(&s->changed, &s->lock, 100);
		struct pollfd p = {cancel_fd, POLLIN, 0};
		if (cancel_fd >= 0 && poll(&p, 1, 0) > 0) {
			pthread_mutex_unlock(&s->lock);
			return 1;
		}
	}
	bool dead = s->dead;
	if (!dead)
		s->busy = true;
	pthread_mutex_unlock(&s->lock);
	if (dead) {
		sess_ended_error(s, err);
		return -1;
	}
	return 0;
}

void sess_give(struct sess *s)
{
	pthread_mutex_lock(&s->lock);
	s->busy = false;
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->lock);
	atomic_store(&s->used_ms, sb_now_ms());
}
