#include "runner/warm/warm.h"

#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

/* A job is retried on another worker only while it has not begun (the
 * worker died or broke before it forked the job's child). */
#define MAX_ATTEMPTS 3

int sb_run_warm(struct sb_pool *pool, const struct sb_job *job, const struct sb_run_hooks *hooks,
		struct sb_sink *sink, struct sb_result *res)
{
	uint64_t start = sb_now_ms();
	int cancel_fd = hooks ? hooks->cancel_fd : -1;
	for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
		bool cancelled = false;
		struct sb_error err = {0};
		struct sb_worker *w = sb_pool_acquire(pool, job->lang, &job->limits, cancel_fd, &cancelled, &err);
		if (!w) {
			if (cancelled) {
				res->cancelled = true;
			} else {
				res->internal_error = strdup(err.msg[0] ? err.msg : "no warm worker could be started");
				if (err.hint[0])
					res->hint = strdup(err.hint);
			}
			break;
		}
		enum sb_wrun rc = sb_worker_run(w, job, hooks, sink, res);
		sb_pool_release(pool, w, rc == SB_WRUN_OK);
		if (rc != SB_WRUN_RETRY)
			break;
		if (attempt + 1 == MAX_ATTEMPTS)
			res->internal_error = strdup("warm workers kept failing before the job could start");
	}
	res->duration_ms = sb_now_ms() - start;
	return 0;
}
