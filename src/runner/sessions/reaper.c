#include "runner/sessions/reaper.h"

#include <stdio.h>

#include "runner/sessions/registry.h"
#include "util/clock.h"

/* How often the reaper looks for idle sessions and old jobs. */
#define REAP_EVERY_MS 1000

/* Whether a call has s's interpreter: s->busy is guarded by s's own lock
 * (sess.h), taken inside the registry's (the order registry.h gives). */
static bool busy(struct sess *s)
{
	pthread_mutex_lock(&s->lock);
	bool b = s->busy;
	pthread_mutex_unlock(&s->lock);
	return b;
}

/* Under the registry's lock: the first of the sessions unused for idle_ms,
 * with a reference; NULL when none is. */
static struct sess *idle_session_locked(struct sb_registry *r, uint64_t now, uint64_t idle_ms)
{
	for (struct sess *s = r->sessions; s; s = s->next) {
		/* A session running a call or a job is in use, not idle. (A
		 * call may have stored its start after now was read: no lock
		 * orders them; sb_ms_since makes that 0, never a wrap.) */
		uint64_t idle = sb_ms_since(atomic_load(&s->used_ms), now);
		if (!s->anonymous && idle >= idle_ms && !reg_job_in_locked(r, s) && !busy(s)) {
			s->refs++;
			return s;
		}
	}
	return NULL;
}

static void *reaper_main(void *arg)
{
	struct sb_reaper *rp = arg;
	struct sb_registry *r = rp->reg;
	uint64_t idle_ms = (uint64_t)rp->idle_minutes * 60000;
	char why[160];
	snprintf(why, sizeof why, "expired after %u min idle and was closed", rp->idle_minutes);
	pthread_mutex_lock(&r->lock);
	while (!rp->stop) {
		sb_cond_wait_ms(&rp->wake, &r->lock, REAP_EVERY_MS);
		uint64_t now = sb_now_ms();
		if (rp->prune)
			rp->prune(rp->ctx, now);
		struct sess *victim = idle_session_locked(r, now, idle_ms);
		if (victim) {
			pthread_mutex_unlock(&r->lock);
			reg_close(r, victim, why);
			reg_put(r, victim);
			pthread_mutex_lock(&r->lock);
		}
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

int sb_reaper_start(struct sb_reaper *rp, struct sb_registry *reg, unsigned idle_minutes,
		    void (*prune)(void *ctx, uint64_t now), void *ctx)
{
	*rp = (struct sb_reaper){.reg = reg, .idle_minutes = idle_minutes, .prune = prune, .ctx = ctx};
	if (sb_cond_init(&rp->wake))
		return -1;
	if (pthread_create(&rp->thread, NULL, reaper_main, rp) != 0) {
		pthread_cond_destroy(&rp->wake);
		return -1;
	}
	rp->started = true;
	return 0;
}

void sb_reaper_stop(struct sb_reaper *rp)
{
	if (!rp->started)
		return;
	pthread_mutex_lock(&rp->reg->lock);
	rp->stop = true;
	pthread_cond_broadcast(&rp->wake);
	pthread_mutex_unlock(&rp->reg->lock);
	pthread_join(rp->thread, NULL);
	pthread_cond_destroy(&rp->wake);
	rp->started = false;
}
