/* The pool of warm workers. Workers are keyed by what they have imported
 * (Sage or plain Python) and by the limits of their sandbox; a job takes an
 * idle worker of its key, or waits while one starts in the background.
 *
 *  - pool_size workers per key are kept (started at prestart or first use);
 *  - under load the pool grows, up to max_concurrent workers per key, and
 *    shrinks back after a minute idle;
 *  - at most max_concurrent jobs run at once, across all keys;
 *  - a worker is recycled after worker_max_jobs jobs or worker_max_minutes:
 *    its replacement starts before it is due, so no job waits for a cold one;
 *  - a worker that died, misbehaved or was killed for a job is replaced.
 * Thread-safe. */
#ifndef SAGEBOX_POOL_H
#define SAGEBOX_POOL_H

#include <jansson.h>
#include <stdbool.h>

#include "config/config.h"
#include "core/job.h"
#include "runner/warm/worker.h"
#include "sandbox/sandbox.h"
#include "util/error.h"

struct sb_pool;

/* cfg must outlive the pool. */
struct sb_pool *sb_pool_new(const struct sb_config *cfg, const struct sb_backend *be);
/* Kill every worker (busy ones too) and wait for the pool's threads. */
void sb_pool_free(struct sb_pool *p);
/* Start pool_size workers for jobs of this language with the configured
 * limits, in the background. */
void sb_pool_prestart(struct sb_pool *p, enum sb_lang lang);
/* A worker for a job of this language and limits, or NULL: err filled (no
 * worker could start), or *cancelled when cancel_fd became readable. */
struct sb_worker *sb_pool_acquire(struct sb_pool *p, enum sb_lang lang, const struct sb_limits *l, int cancel_fd,
				  bool *cancelled, struct sb_error *err);
/* Give the worker back; reusable=false: it is killed and replaced. */
void sb_pool_release(struct sb_pool *p, struct sb_worker *w, bool reusable);
json_t *sb_pool_status(struct sb_pool *p);
/* Its workers by kind and state, into the metrics (metrics/metrics.h). */
void sb_pool_metrics(struct sb_pool *p);

#endif
