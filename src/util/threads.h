/* A set of reusable threads: work handed to it runs on a thread that has
 * finished earlier work and waits for more, or on a new one when none
 * waits. Up to max_idle threads wait; a thread finishing beyond that
 * exits. Saves a thread's creation (clone, its stack) per piece of work
 * and lets the hand-over wake a thread that is already scheduled-in-waiting
 * (MCP calls: docs/WARM.md, "Python `pass`, hop by hop"). */
#ifndef SAGEBOX_UTIL_THREADS_H
#define SAGEBOX_UTIL_THREADS_H

#include <pthread.h>
#include <stdbool.h>

struct sb_thread;

struct sb_threads {
	pthread_mutex_t lock;
	pthread_cond_t gone;      /* a thread exited */
	struct sb_thread *idle;   /* waiting for work, the latest first */
	struct sb_thread *exited; /* to be joined */
	unsigned n_idle, max_idle;
	unsigned live;            /* threads that have not exited */
	bool closing;
};

void sb_threads_init(struct sb_threads *p, unsigned max_idle);

/* Run fn(arg) on a waiting thread or a new one. 0, or -1 (no thread could
 * be created, or the set is closing): fn was not called. */
int sb_threads_run(struct sb_threads *p, void (*fn)(void *), void *arg);

/* Join the threads that have exited. */
void sb_threads_reap(struct sb_threads *p);

/* No more work: wait until every thread has finished its work and exited,
 * join them all and free the set's resources. */
void sb_threads_close(struct sb_threads *p);

#endif
