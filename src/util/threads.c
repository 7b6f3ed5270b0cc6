#include "util/threads.h"

#include <stdlib.h>

struct sb_thread {
	struct sb_threads *pool;
	pthread_t id;
	pthread_cond_t go;   /* work was handed over, or the set closes */
	void (*fn)(void *);  /* NULL while waiting */
	void *arg;
	struct sb_thread *next; /* in idle or exited */
};

void sb_threads_init(struct sb_threads *p, unsigned max_idle)
{
	*p = (struct sb_threads){.max_idle = max_idle};
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->gone, NULL);
}

static void unlink_idle(struct sb_threads *p, struct sb_thread *t)
{
	for (struct sb_thread **pp = &p->idle; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			p->n_idle--;
			return;
		}
}

static void *thread_main(void *arg)
{
	struct sb_thread *t = arg;
	struct sb_threads *p = t->pool;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		void (*fn)(void *) = t->fn;
		void *fn_arg = t->arg;
		pthread_mutex_unlock(&p->lock);
		fn(fn_arg);
		pthread_mutex_lock(&p->lock);
		t->fn = NULL;
		if (p->closing || p->n_idle >= p->max_idle)
			break;
		t->next = p->idle;
		p->idle = t;
		p->n_idle++;
		while (!t->fn && !p->closing)
			pthread_cond_wait(&t->go, &p->lock);
		if (!t->fn) { /* closing */
			unlink_idle(p, t);
			break;
		}
		/* sb_threads_run took it off the idle list */
	}
	t->next = p->exited;
	p->exited = t;
	p->live--;
	pthread_cond_broadcast(&p->gone);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int sb_threads_run(struct sb_threads *p, void (*fn)(void *), void *arg)
{
	int rc = -1;
	pthread_mutex_lock(&p->lock);
	if (p->closing)
		goto out;
	struct sb_thread *t = p->idle;
	if (t) {
		p->idle = t->next;
		p->n_idle--;
		t->fn = fn;
		t->arg = arg;
		pthread_cond_signal(&t->go);
		rc = 0;
		goto out;
	}
	t = calloc(1, sizeof *t);
	if (!t)
		goto out;
	t->pool = p;
	t->fn = fn;
	t->arg = arg;
	pthread_cond_init(&t->go, NULL);
	/* Under the lock: the new thread starts by taking it, after t is set up. */
	if (pthread_create(&t->id, NULL, thread_main, t) != 0) {
		pthread_cond_destroy(&t->go);
		free(t);
		goto out;
	}
	p->live++;
	rc = 0;
out:
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void sb_threads_reap(struct sb_threads *p)
{
	pthread_mutex_lock(&p->lock);
	struct sb_thread *t = p->exited;
	p->exited = NULL;
	pthread_mutex_unlock(&p->lock);
	while (t) {
		struct sb_thread *next = t->next;
		pthread_join(t->id, NULL);
		pthread_cond_destroy(&t->go);
		free(t);
		t = next;
	}
}

void sb_threads_close(struct sb_threads *p)
{
	pthread_mutex_lock(&p->lock);
	p->closing = true;
	for (struct sb_thread *t = p->idle; t; t = t->next)
		pthread_cond_signal(&t->go);
	while (p->live > 0)
		pthread_cond_wait(&p->gone, &p->lock);
	pthread_mutex_unlock(&p->lock);
	sb_threads_reap(p);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->gone);
}
