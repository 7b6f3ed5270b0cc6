/* Fresh isolation: one new sandbox per job, the seed's way. */
#ifndef SAGEBOX_FRESH_H
#define SAGEBOX_FRESH_H

#include "config/config.h"
#include "core/job.h"
#include "core/result.h"
#include "runner/hooks.h"
#include "runner/supervise.h"
#include "sandbox/sandbox.h"

/* Run job in a new sandbox; its output goes to sink. Returns 0 with res
 * filled (res->out/err are the sink's business). */
int sb_run_fresh(const struct sb_config *cfg, const struct sb_backend *be, const struct sb_job *job,
		 const struct sb_run_hooks *hooks, struct sb_sink *sink, struct sb_result *res);

#endif
