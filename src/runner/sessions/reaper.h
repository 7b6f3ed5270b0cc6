/* Expiry: a thread that, about every second, closes the sessions unused for
 * session_idle_minutes (no call, no running job) and lets the jobs layer
 * forget its old finished jobs. Internal to src/runner/; above the
 * registry, below sessions.c (which starts it) and jobs.c (whose pruning
 * it calls through prune, so that it needs nothing of jobs.c). */
#ifndef SAGEBOX_REAPER_H
#define SAGEBOX_REAPER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct sb_registry;

struct sb_reaper {
	struct sb_registry *reg;
	unsigned idle_minutes;
	/* Called under the registry's lock each round (now: sb_now_ms). */
	void (*prune)(void *ctx, uint64_t now);
	void *ctx;
	pthread_t thread;
	pthread_cond_t wake;   /* stop (monotonic; waited on under the registry's lock) */
	bool stop;             /* under the registry's lock */
	bool started;
};

/* 0, or -1 when its thread could not start. */
int sb_reaper_start(struct sb_reaper *rp, struct sb_registry *reg, unsigned idle_minutes,
		    void (*prune)(void *ctx, uint64_t now), void *ctx);
/* Ends the thread (when started) and frees what start made. */
void sb_reaper_stop(struct sb_reaper *rp);

#endif
