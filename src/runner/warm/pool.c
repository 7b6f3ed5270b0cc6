#include "runner/warm/pool.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics/metrics.h"
#include "runner/warm/backoff.h"
#include "util/clock.h"

/* Extra workers (beyond pool_size) that have been idle this long go. */
#define SHRINK_IDLE_MS 60000
/* How often the keeper looks at idle workers. */
#define KEEPER_TICK_MS 1000
/* A worker is replaced this long before worker_max_minutes is reached. */
#define RECYCLE_EARLY_MS 60000
/* The most jobs before worker_max_jobs a replacement starts (replace_ahead):
 * enough for it to idle through its warm-ups while the old worker takes
 * calls back to back, and no more, for a replacement waiting longer than
 * SHRINK_IDLE_MS is dropped as an extra worker. */
#define REPLACE_AHEAD_MAX 500

struct key {
	enum sb_wkind kind;
	struct sb_limits l; /* timeout and output caps are per job, not per key */
};

struct keyent {
	struct keyent *next;
	struct key key;
	unsigned want;    /* workers kept for this key */
	unsigned waiting; /* jobs waiting for a worker */
	struct sb_backoff backoff; /* after a failed start, the keeper waits (backoff.h) */
};

enum slot_state { SLOT_STARTING, SLOT_IDLE, SLOT_BUSY };

struct slot {
	struct slot *next;
	struct sb_worker *w;
	struct keyent *k;
	enum slot_state state;
	bool spawned;  /* its sandbox exists: sb_worker_kill is valid */
	bool retiring; /* due for recycling: a replacement is on its way */
	bool replaced; /* its replacement was started ahead (replace_ahead) */
	uint64_t idle_since;
};

struct sb_pool {
	const struct sb_config *cfg;
	const struct sb_backend *be;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct slot *slots;
	struct keyent *keys;
	unsigned running; /* jobs holding or waiting for a worker */
	unsigned threads; /* pool threads alive (starters, destroyers, keeper) */
	bool closing;
	bool keeper;
};

static bool key_eq(const struct key *a, const struct key *b)
{
	return a->kind == b->kind && a->l.memory_bytes == b->l.memory_bytes && a->l.cpus == b->l.cpus &&
	       a->l.pids == b->l.pids && a->l.nofile == b->l.nofile && a->l.fsize_bytes == b->l.fsize_bytes &&
	       a->l.tmpfs_bytes == b->l.tmpfs_bytes;
}

static uint64_t max_age_ms(const struct sb_pool *p)
{
	return (uint64_t)p->cfg->worker_max_minutes * 60000;
}

static struct keyent *key_get(struct sb_pool *p, const struct key *key)
{
	for (struct keyent *k = p->keys; k; k = k->next)
		if (key_eq(&k->key, key))
			return k;
	struct keyent *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	k->key = *key;
	k->next = p->keys;
	p->keys = k;
	return k;
}

static void unlink_slot(struct sb_pool *p, struct slot *s)
{
	for (struct slot **pp = &p->slots; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			return;
		}
}

static unsigned count(const struct sb_pool *p, const struct keyent *k, int state, bool with_retiring)
{
	unsigned n = 0;
	for (const struct slot *s = p->slots; s; s = s->next)
		if (s->k == k && (state < 0 || (int)s->state == state) && (with_retiring || !s->retiring))
			n++;
	return n;
}

/* ---- threads: each holds p->threads until it is completely done */

static int spawn_thread(struct sb_pool *p, void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	pthread_t t;
	if (pthread_attr_init(&a))
		return -1;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	p->threads++;
	int rc = pthread_create(&t, &a, fn, arg);
	pthread_attr_destroy(&a);
	if (rc)
		p->threads--;
	return rc ? -1 : 0;
}

static void thread_done(struct sb_pool *p)
{
	pthread_mutex_lock(&p->mu);
	p->threads--;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

struct destroy_arg {
	struct sb_pool *p;
	struct sb_worker *w;
};

static void *destroy_main(void *arg)
{
	struct destroy_arg *d = arg;
	sb_worker_destroy(d->w);
	thread_done(d->p);
	free(d);
	return NULL;
}

/* Kill and reap a worker off the caller's path (podman's cleanup takes a
 * while; a job's result must not wait for it). Locked. */
static void destroy_async(struct sb_pool *p, struct sb_worker *w)
{
	sb_worker_kill(w);
	struct destroy_arg *d = malloc(sizeof *d);
	if (d) {
		*d = (struct destroy_arg){p, w};
		if (spawn_thread(p, destroy_main, d) == 0)
			return;
		free(d);
	}
	/* No thread: destroy here (the lock is held, but this is rare). */
	sb_worker_destroy(w);
}

struct start_arg {
	struct sb_pool *p;
	struct slot *s;
};

static void *start_main(void *arg)
{
	struct start_arg *a = arg;
	struct sb_pool *p = a->p;
	struct slot *s = a->s;
	free(a);
	struct sb_error err = {0};
	int rc = sb_worker_spawn(s->w, p->cfg, p->be, &err);
	pthread_mutex_lock(&p->mu);
	s->spawned = rc == 0;
	if (s->spawned && p->closing)
		sb_worker_kill(s->w);
	pthread_mutex_unlock(&p->mu);
	if (rc == 0)
		rc = sb_worker_wait_ready(s->w, &err);
	struct sb_worker *dead = NULL;
	pthread_mutex_lock(&p->mu);
	if (rc == 0 && !p->closing) {
		s->state = SLOT_IDLE;
		s->idle_since = sb_now_ms();
	} else {
		if (rc) {
			sb_backoff_failed(&s->k->backoff, &err);
		}
		unlink_slot(p, s);
		dead = s->w;
		free(s);
	}
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	sb_worker_destroy(dead);
	thread_done(p);
	return NULL;
}

/* Start one more worker for k in the background. Locked. */
static void start_worker(struct sb_pool *p, struct keyent *k)
{
	struct slot *s = calloc(1, sizeof *s);
	struct start_arg *a = malloc(sizeof *a);
	if (s)
		s->w = sb_worker_new(k->key.kind, &k->key.l);
	if (!s || !a || !s->w) {
		if (s)
			free(s->w);
		free(s);
		free(a);
		return;
	}
	s->k = k;
	s->state = SLOT_STARTING;
	/* At the tail: take_idle gives a job to the oldest idle worker, which
	 * has most likely run its warm-ups; a worker added under load then
	 * gets only the calls the others cannot take, and idles into its own
	 * warm-ups in between (docs/WARM.md, "Throughput by clients"). */
	struct slot **tail = &p->slots;
	while (*tail)
		tail = &(*tail)->next;
	*tail = s;
	*a = (struct start_arg){p, s};
	if (spawn_thread(p, start_main, a)) {
		unlink_slot(p, s);
		sb_worker_destroy(s->w);
		free(s);
		free(a);
	}
}

/* Keep k at its wanted number of workers (not counting retiring ones).
 * Locked. */
static void top_up(struct sb_pool *p, struct keyent *k, bool backoff)
{
	if (p->closing)
		return;
	/* (a job that needs a worker still starts one at once) */
	if (backoff && !sb_backoff_may_try(&k->backoff, sb_now_ms()))
		return;
	for (unsigned have = count(p, k, -1, false); have < k->want; have++)
		start_worker(p, k);
}

/* Is this worker's time up, or will it be after one more job? Locked. */
static bool due(const struct sb_pool *p, const struct sb_worker *w, uint64_t now, bool one_more)
{
	uint64_t age = sb_ms_since(w->spawned_ms, now);
	uint64_t early = one_more ? RECYCLE_EARLY_MS : 0;
	/* jobs counts the job it is running (taken at acquire). */
	return w->jobs + (one_more ? 1u : 0u) >= p->cfg->worker_max_jobs || age + early >= max_age_ms(p);
}

/* ---- the keeper: idle workers that died, aged or are no longer needed */

static void keep(struct sb_pool *p)
{
	uint64_t now = sb_now_ms();
	for (struct slot *s = p->slots, *next; s; s = next) {
		next = s->next;
		if (s->state != SLOT_IDLE)
			continue;
		bool lost = !sb_worker_idle_ok(s->w);
		bool drop = lost || due(p, s->w, now, false);
		if (!drop && !s->retiring && due(p, s->w, now, true))
			s->retiring = true;
		if (!drop && s->retiring && count(p, s->k, SLOT_IDLE, false) > 0)
			drop = true; /* its replacement is ready */
		bool shrink = false;
		if (!drop && !s->retiring && now >= s->idle_since + SHRINK_IDLE_MS &&
		    count(p, s->k, -1, false) > s->k->want)
			drop = shrink = true;
		if (drop && !shrink)
			sb_metric_add(SB_M_WORKER_REPLACEMENTS, 1, (const char *[]){lost ? "lost" : "recycled"});
		if (drop) {
			unlink_slot(p, s);
			destroy_async(p, s->w);
			free(s);
		}
	}
	for (struct keyent *k = p->keys; k; k = k->next)
		top_up(p, k, true);
}

static void *keeper_main(void *arg)
{
	struct sb_pool *p = arg;
	pthread_mutex_lock(&p->mu);
	while (!p->closing) {
		keep(p);
		sb_cond_wait_ms(&p->cv, &p->mu, KEEPER_TICK_MS);
	}
	pthread_mutex_unlock(&p->mu);
	thread_done(p);
	return NULL;
}

static void ensure_keeper(struct sb_pool *p)
{
	if (!p->keeper && !p->closing && spawn_thread(p, keeper_main, p) == 0)
		p->keeper = true;
}

/* ---- public */

struct sb_pool *sb_pool_new(const struct sb_config *cfg, const struct sb_backend *be)
{
	struct sb_pool *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->cfg = cfg;
	p->be = be;
	sb_cond_init(&p->cv);
	pthread_mutex_init(&p->mu, NULL);
	return p;
}

void sb_pool_free(struct sb_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->closing = true;
	for (struct slot *s = p->slots, *next; s; s = next) {
		next = s->next;
		if (s->state == SLOT_IDLE) {
			unlink_slot(p, s);
			destroy_async(p, s->w);
			free(s);
		} else if (s->spawned || s->state == SLOT_BUSY) {
			sb_worker_kill(s->w); /* starters and jobs then finish quickly */
		}
	}
	pthread_cond_broadcast(&p->cv);
	while (p->threads > 0 || p->slots)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	for (struct keyent *k = p->keys, *next; k; k = next) {
		next = k->next;
		free(k);
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

void sb_pool_prestart(struct sb_pool *p, enum sb_lang lang)
{
	struct key key = {sb_wkind_for(lang), p->cfg->limits};
	pthread_mutex_lock(&p->mu);
	struct keyent *k = key_get(p, &key);
	if (k && !p->closing) {
		if (k->want < p->cfg->pool_size)
			k->want = p->cfg->pool_size;
		top_up(p, k, false);
		ensure_keeper(p);
	}
	pthread_mutex_unlock(&p->mu);
}

/* Wait a little for the pool to change; true when the job was cancelled. */
static bool wait_or_cancel(struct sb_pool *p, int cancel_fd)
{
	if (cancel_fd >= 0) {
		struct pollfd pf = {cancel_fd, POLLIN, 0};
		if (poll(&pf, 1, 0) > 0)
			return true;
	}
	sb_cond_wait_ms(&p->cv, &p->mu, cancel_fd >= 0 ? 50 : 1000);
	return false;
}

/* How many jobs before worker_max_jobs a worker's replacement starts. A
 * replacement started at the last job took the calls cold: they came back
 * to back, it never idled into its warm-ups, and each call cost a third
 * more CPU until it had warmed up under load (docs/WARM.md). Started half
 * a lifetime (at most REPLACE_AHEAD_MAX jobs) ahead, it waits at the
 * pool's tail, idle and warming up, while the old worker takes the calls.
 * Few jobs are too short a lifetime to be worth a second worker. */
static unsigned replace_ahead(const struct sb_pool *p)
{
	unsigned half = p->cfg->worker_max_jobs / 2;
	if (p->cfg->worker_max_jobs < 40)
		return 0;
	return half < REPLACE_AHEAD_MAX ? half : REPLACE_AHEAD_MAX;
}

static struct slot *take_idle(struct sb_pool *p, struct keyent *k)
{
	uint64_t now = sb_now_ms();
	struct slot *fallback = NULL;
	for (struct slot *s = p->slots, *next; s; s = next) {
		next = s->next;
		if (s->k != k || s->state != SLOT_IDLE)
			continue;
		if (!sb_worker_idle_ok(s->w) || due(p, s->w, now, false)) {
			unlink_slot(p, s);
			destroy_async(p, s->w);
			free(s);
			continue;
		}
		if (!s->retiring)
			return s;
		fallback = s; /* still within its limits: better than a cold start */
	}
	return fallback;
}

struct sb_worker *sb_pool_acquire(struct sb_pool *p, enum sb_lang lang, const struct sb_limits *l, int cancel_fd,
				  bool *cancelled, struct sb_error *err)
{
	struct key key = {sb_wkind_for(lang), *l};
	*cancelled = false;
	pthread_mutex_lock(&p->mu);
	ensure_keeper(p);
	struct keyent *k = key_get(p, &key);
	if (!k) {
		pthread_mutex_unlock(&p->mu);
		sb_fail(err, "out of memory");
		return NULL;
	}
	if (!k->want)
		k->want = p->cfg->pool_size;
	while (p->running >= p->cfg->max_concurrent && !p->closing) {
		if (wait_or_cancel(p, cancel_fd)) {
			*cancelled = true;
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
	}
	p->running++;
	k->waiting++;
	unsigned seen_fail = k->backoff.failures;
	struct sb_worker *w = NULL;
	for (;;) {
		if (p->closing) {
			sb_fail(err, "sagebox is shutting down");
			break;
		}
		struct slot *s = take_idle(p, k);
		if (s) {
			s->state = SLOT_BUSY;
			w = s->w;
			w->jobs++;
			/* Its last job: the replacement starts now, not after. */
			unsigned ahead = replace_ahead(p);
			if (!s->retiring && due(p, w, sb_now_ms(), true)) {
				s->retiring = true;
				top_up(p, k, false);
			} else if (!s->retiring && !s->replaced && ahead &&
				   w->jobs + ahead >= p->cfg->worker_max_jobs &&
				   count(p, k, -1, true) < p->cfg->max_concurrent) {
				s->replaced = true;
				start_worker(p, k);
			}
			break;
		}
		if (k->backoff.failures != seen_fail) {
			*err = k->backoff.err;
			break;
		}
		if (count(p, k, SLOT_STARTING, true) < k->waiting && count(p, k, -1, true) < p->cfg->max_concurrent)
			start_worker(p, k);
		if (wait_or_cancel(p, cancel_fd)) {
			*cancelled = true;
			break;
		}
	}
	k->waiting--;
	if (!w)
		p->running--;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return w;
}

void sb_pool_release(struct sb_pool *p, struct sb_worker *w, bool reusable)
{
	pthread_mutex_lock(&p->mu);
	p->running--;
	struct slot *s = p->slots;
	while (s && s->w != w)
		s = s->next;
	if (s) {
		/* A retiring worker within its limits stays idle as a fallback
		 * until its replacement is ready (the keeper then drops it). */
		if (!reusable || p->closing || due(p, w, sb_now_ms(), false)) {
			struct keyent *k = s->k;
			if (!p->closing)
				sb_metric_add(SB_M_WORKER_REPLACEMENTS, 1, (const char *[]){reusable ? "recycled" : "lost"});
			unlink_slot(p, s);
			free(s);
			destroy_async(p, w);
			top_up(p, k, !reusable);
		} else {
			s->state = SLOT_IDLE;
			s->idle_since = sb_now_ms();
		}
	}
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

json_t *sb_pool_status(struct sb_pool *p)
{
	static const char *const names[] = {"starting", "idle", "busy"};
	json_t *list = json_array();
	pthread_mutex_lock(&p->mu);
	uint64_t now = sb_now_ms();
	for (struct slot *s = p->slots; s; s = s->next) {
		/* A starting worker is being written by its starter thread. */
		json_t *o = s->state == SLOT_STARTING ? json_pack("{s:s}", "kind", sb_wkind_name(s->w->kind))
						     : sb_worker_status(s->w, now);
		json_object_set_new(o, "state", json_string(names[s->state]));
		if (s->retiring)
			json_object_set_new(o, "retiring", json_true());
		json_array_append_new(list, o);
	}
	json_t *o = json_pack("{s:o, s:i, s:i}", "workers", list, "jobs_running", (int)p->running, "max_concurrent",
			      (int)p->cfg->max_concurrent);
	for (struct keyent *k = p->keys; k; k = k->next)
		if (k->backoff.failures)
			json_object_set_new(o, "last_start_error", json_string(k->backoff.err.msg));
	pthread_mutex_unlock(&p->mu);
	return o;
}

void sb_pool_metrics(struct sb_pool *p)
{
	static const char *const states[] = {"starting", "idle", "busy"};
	unsigned n[2][3] = {{0}};
	pthread_mutex_lock(&p->mu);
	for (struct slot *s = p->slots; s; s = s->next)
		n[s->w->kind == SB_WKIND_SAGE ? 0 : 1][s->state]++;
	pthread_mutex_unlock(&p->mu);
	for (int k = 0; k < 2; k++)
		for (int st = 0; st < 3; st++)
			sb_metric_set(SB_M_WARM_WORKERS, n[k][st],
				      (const char *[]){sb_wkind_name(k ? SB_WKIND_PLAIN : SB_WKIND_SAGE), states[st]});
}
