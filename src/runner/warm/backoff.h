/* The back-off after a sandbox failed to start, shared by the warm pool's
 * keeper (pool.c) and the session spares' makers (sessions/spares.c): a
 * maker does not start one again on its own for a while, and a caller
 * waiting for one learns of a new failure. */
#ifndef SAGEBOX_RUNNER_BACKOFF_H
#define SAGEBOX_RUNNER_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

/* After a sandbox failed to start, a maker waits this long before it tries
 * again on its own (a caller that waits for one still asks at once). */
#define SB_BACKOFF_RETRY_MS 30000

/* The failed starts of one kind of sandbox (a language's spare, a pool
 * key's workers). The caller's lock guards it. */
struct sb_backoff {
	uint64_t failed_ms;   /* the last failure (monotonic ms), 0: none */
	unsigned failures;    /* failures so far: a waiter sees a new one */
	unsigned since_ok;    /* failures since the last success */
	struct sb_error err;  /* why the last start failed */
};
void sb_backoff_failed(struct sb_backoff *b, const struct sb_error *err);
void sb_backoff_ok(struct sb_backoff *b);
/* Whether a maker may start one on its own now: no failure since the last
 * success, or SB_BACKOFF_RETRY_MS since the last one. */
bool sb_backoff_may_try(const struct sb_backoff *b, uint64_t now);

#endif
