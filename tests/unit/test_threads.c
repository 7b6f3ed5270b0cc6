/* util/threads: work handed over back to back runs on the same thread (no
 * thread created per piece of work); pieces handed over at once run at
 * once, each on its own thread; at most max_idle threads stay waiting, the
 * others exit and are joined; close waits for work still running. */
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "check.h"
#include "util/threads.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done, running, max_running;
static bool gate_open;
static pthread_t ran_on[64];

static void record(void *arg)
{
	int i = (int)(long)arg;
	pthread_mutex_lock(&mu);
	ran_on[i] = pthread_self();
	done++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/* Waits at the gate: counts how many run at once. */
static void gated(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	running++;
	if (running > max_running)
		max_running = running;
	pthread_cond_broadcast(&cv);
	while (!gate_open)
		pthread_cond_wait(&cv, &mu);
	running--;
	done++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void wait_done(int n)
{
	pthread_mutex_lock(&mu);
	while (done < n)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

/* Until the set has this many waiting threads and this many alive (the
 * threads file themselves after their work returned). */
static bool settle(struct sb_threads *p, unsigned idle, unsigned live)
{
	for (int i = 0; i < 5000; i++) {
		pthread_mutex_lock(&p->lock);
		bool ok = p->n_idle == idle && p->live == live;
		pthread_mutex_unlock(&p->lock);
		if (ok)
			return true;
		usleep(1000);
	}
	return false;
}

int main(void)
{
	struct sb_threads p;
	sb_threads_init(&p, 4);

	/* Back to back: one thread does all of it. */
	for (int i = 0; i < 20; i++) {
		CHECK(sb_threads_run(&p, record, (void *)(long)i) == 0);
		wait_done(i + 1);
		CHECK(settle(&p, 1, 1));
	}
	for (int i = 1; i < 20; i++)
		CHECK(pthread_equal(ran_on[i], ran_on[0]));

	/* Six at once: six threads; four stay waiting, two exit. */
	done = 0;
	for (int i = 0; i < 6; i++)
		CHECK(sb_threads_run(&p, gated, NULL) == 0);
	pthread_mutex_lock(&mu);
	while (running < 6)
		pthread_cond_wait(&cv, &mu);
	gate_open = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	wait_done(6);
	CHECK(max_running == 6);
	CHECK(settle(&p, 4, 4));
	sb_threads_reap(&p);
	pthread_mutex_lock(&p.lock);
	CHECK(p.exited == NULL);
	pthread_mutex_unlock(&p.lock);

	/* Close while a piece of work runs: it finishes first. */
	done = 0;
	gate_open = false;
	CHECK(sb_threads_run(&p, gated, NULL) == 0);
	pthread_mutex_lock(&mu);
	while (running < 1)
		pthread_cond_wait(&cv, &mu);
	gate_open = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	sb_threads_close(&p);
	CHECK(done == 1);
	return check_summary();
}
