/* Warm isolation: the job runs in a child forked from a warm worker of the
 * pool (see pool.h, worker.h and the driver's worker mode). */
#ifndef SAGEBOX_WARM_H
#define SAGEBOX_WARM_H

#include "core/job.h"
#include "core/result.h"
#include "runner/warm/pool.h"
#include "runner/hooks.h"
#include "runner/supervise.h"

/* Run job on a warm worker (retried on another while it has not begun);
 * its output goes to sink. */
int sb_run_warm(struct sb_pool *pool, const struct sb_job *job, const struct sb_run_hooks *hooks,
		struct sb_sink *sink, struct sb_result *res);

#endif
