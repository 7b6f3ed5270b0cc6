/* Progress reports while a job runs: shared by fresh and warm jobs. */
#ifndef SAGEBOX_PROGRESS_H
#define SAGEBOX_PROGRESS_H

#include <stdint.h>

#include "runner/capture.h"
#include "runner/runner.h"

/* Call hooks->progress when *next (ms, monotonic) has come, with the output
 * so far, and set *next to the following report. No-op without a hook. */
void sb_progress_maybe_report(const struct sb_run_hooks *hooks, uint64_t *next, uint64_t start, uint64_t now,
			      const struct sb_capture *out, const struct sb_capture *err);

#endif
