#include "runner/sessions/spares.h"

#include <pthread.h>
#include <stdlib.h>

#include "metrics/metrics.h"
#include "runner/sessions/sess.h"
#include "util/clock.h"

/* The ready spare sandbox of one language. */
struct spare {
	struct sb_spares *sp;
	enum sb_lang lang;
	pthread_t maker;
	struct sess *ready;
	bool wanted;       /* the language is in use: keep one ready */
	unsigned waiting;  /* takes waiting for it */
	struct sb_backoff backoff;
};

struct sb_spares {
	const struct sb_config *cfg;
	const struct sb_backend *be;
	pthread_mutex_t lock;       /* everything here */
	pthread_cond_t changed;     /* a spare is ready, failed or taken; stopping (monotonic) */
	struct spare by_lang[3];    /* by enum sb_lang */
	unsigned makers;            /* started */
	bool stopping;
};

static void *maker_main(void *arg)
{
	struct spare *x = arg;
	struct sb_spares *sp = x->sp;
	pthread_mutex_lock(&sp->lock);
	while (!sp->stopping) {
		bool retry_ok = x->waiting || sb_backoff_may_try(&x->backoff, sb_now_ms());
		if (!x->wanted || x->ready || !retry_ok) {
			sb_cond_wait_ms(&sp->changed, &sp->lock, 1000);
			continue;
		}
		pthread_mutex_unlock(&sp->lock);
		struct sb_error err = {0};
		struct sess *s = sess_spawn(sp->cfg, sp->be, x->lang, 0, 0, &err);
		pthread_mutex_lock(&sp->lock);
		if (s && !sp->stopping) {
			s->refs = 1;
			x->ready = s;
			sb_backoff_ok(&x->backoff);
		} else if (!s) {
			sb_backoff_failed(&x->backoff, &err);
		}
		pthread_cond_broadcast(&sp->changed);
		if (s && sp->stopping) {
			pthread_mutex_unlock(&sp->lock);
			sess_destroy(s);
			pthread_mutex_lock(&sp->lock);
		}
	}
	pthread_mutex_unlock(&sp->lock);
	return NULL;
}

struct sb_spares *sb_spares_new(const struct sb_config *cfg, const struct sb_backend *be)
{
	struct sb_spares *sp = calloc(1, sizeof *sp);
	if (!sp)
		return NULL;
	sp->cfg = cfg;
	sp->be = be;
	pthread_mutex_init(&sp->lock, NULL);
	sb_cond_init(&sp->changed);
	for (int l = 0; l < 3; l++) {
		sp->by_lang[l].sp = sp;
		sp->by_lang[l].lang = (enum sb_lang)l;
		if (pthread_create(&sp->by_lang[l].maker, NULL, maker_main, &sp->by_lang[l]) != 0)
			break;
		sp->makers++;
	}
	if (sp->makers < 3) {
		sb_spares_free(sp);
		return NULL;
	}
	return sp;
}

void sb_spares_stop(struct sb_spares *sp)
{
	pthread_mutex_lock(&sp->lock);
	sp->stopping = true;
	pthread_cond_broadcast(&sp->changed);
	pthread_mutex_unlock(&sp->lock);
	for (unsigned i = 0; i < sp->makers; i++)
		pthread_join(sp->by_lang[i].maker, NULL);
	sp->makers = 0;
}

void sb_spares_free(struct sb_spares *sp)
{
	if (!sp)
		return;
	sb_spares_stop(sp);
	for (int l = 0; l < 3; l++)
		sess_destroy(sp->by_lang[l].ready);
	pthread_cond_destroy(&sp->changed);
	pthread_mutex_destroy(&sp->lock);
	free(sp);
}

struct sess *sb_spares_take(struct sb_spares *sp, enum sb_lang lang, int (*claim)(void *ctx, struct sess *s,
			    struct sb_error *err), void *ctx, bool *from_spare, struct sb_error *err)
{
	struct spare *x = &sp->by_lang[lang];
	pthread_mutex_lock(&sp->lock);
	x->wanted = true;
	*from_spare = x->ready != NULL;
	unsigned failures = x->backoff.failures;
	x->waiting++;
	pthread_cond_broadcast(&sp->changed);
	while (!x->ready && !sp->stopping && x->backoff.failures == failures)
		pthread_cond_wait(&sp->changed, &sp->lock);
	x->waiting--;
	struct sess *s = sp->stopping ? NULL : x->ready;
	if (!s && !sp->stopping) {
		*err = x->backoff.err;
	} else if (!s) {
		sb_fail(err, "sagebox is shutting down");
	} else if (claim(ctx, s, err)) {
		s = NULL; /* (e.g. another open took the last place meanwhile): the spare stays ready */
	} else {
		x->ready = NULL;
		pthread_cond_broadcast(&sp->changed); /* the maker starts the next spare */
	}
	pthread_mutex_unlock(&sp->lock);
	return s;
}

void sb_spares_metrics(struct sb_spares *sp)
{
	unsigned ready[3];
	pthread_mutex_lock(&sp->lock);
	for (int l = 0; l < 3; l++)
		ready[l] = sp->by_lang[l].ready != NULL;
	pthread_mutex_unlock(&sp->lock);
	for (int l = 0; l < 3; l++)
		sb_metric_set(SB_M_SPARES, ready[l], (const char *[]){sb_lang_name((enum sb_lang)l)});
}
