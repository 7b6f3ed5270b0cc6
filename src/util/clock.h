#ifndef SAGEBOX_CLOCK_H
#define SAGEBOX_CLOCK_H

#include <pthread.h>
#include <stdint.h>

/* Milliseconds on the monotonic clock. */
uint64_t sb_now_ms(void);

/* Milliseconds from then to now, 0 when then is later: a time another
 * thread stores without a lock (a session's last use) can be newer than a
 * now read just before it, and now - then would wrap to 584 million years
 * (the reaper closed a session in use as idle for 30 min). */
static inline uint64_t sb_ms_since(uint64_t then, uint64_t now)
{
	return now > then ? now - then : 0;
}

/* A condition variable whose timed waits run on the monotonic clock, so
 * that a change of the wall clock (NTP, an operator's date) neither wakes a
 * waiter early nor holds it for hours. 0, or an errno. */
int sb_cond_init(pthread_cond_t *c);
/* Wait on c (made by sb_cond_init, m held) for at most ms milliseconds.
 * 0 when signalled (or woken spuriously), ETIMEDOUT when the time passed. */
int sb_cond_wait_ms(pthread_cond_t *c, pthread_mutex_t *m, uint64_t ms);

#endif
