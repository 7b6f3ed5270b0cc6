/* Fresh isolation: one new sandbox per job, the seed's way. */
#ifndef SAGEBOX_FRESH_H
#define SAGEBOX_FRESH_H

#include "config/config.h"
#include "core/job.h"
#include "core/result.h"
#include "runner/runner.h"
#include "sandbox/sandbox.h"

int sb_run_fresh(const struct sb_config *cfg, const struct sb_backend *be, const struct sb_job *job,
		 const struct sb_run_hooks *hooks, struct sb_result *res);

/* A stream writing this many times its cap is a flood: the sandbox is
 * stopped rather than drained forever. */
#define SB_FLOOD_FACTOR 8

#endif
