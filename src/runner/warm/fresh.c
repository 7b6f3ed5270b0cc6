/* Fresh isolation: one new sandbox per job, the seed's way. Its command is
 * the driver as a worker for one job (`fresh` mode): the host sends the job
 * at once, the worker imports, runs the code in a child as a warm worker
 * does, relays its stdout, stderr and figures as frames, and exits. So both
 * isolations share one feeder (worker_job.c) and one wire, and a figure
 * travels the same way whatever the backend (Docker can pass a container no
 * fd beyond stdin, stdout and stderr). The host's deadline counts from the
 * sandbox's start; timeout, flood and cancel ask the worker to stop the
 * code, then kill the whole sandbox through the backend. */
#include "runner/warm/fresh.h"

#include <stdlib.h>
#include <string.h>

#include "runner/warm/worker.h"
#include "util/clock.h"

static void set_internal(struct sb_result *res, const struct sb_error *err)
{
	if (res->internal_error)
		return;
	res->internal_error = strdup(err->msg[0] ? err->msg : "the sandbox failed");
	if (err->hint[0])
		res->hint = strdup(err->hint);
}

int sb_run_fresh(const struct sb_config *cfg, const struct sb_backend *be, const struct sb_job *job,
		 const struct sb_run_hooks *hooks, struct sb_sink *sink, struct sb_result *res)
{
	uint64_t start = sb_now_ms();
	struct sb_error err = {0};
	struct sb_worker *w = sb_worker_new_fresh(sb_wkind_for(job->lang), &job->limits);
	if (!w) {
		sb_fail(&err, "out of memory");
		set_internal(res, &err);
	} else if (sb_worker_spawn(w, cfg, be, &err)) {
		set_internal(res, &err);
	} else {
		sb_worker_run(w, job, hooks, sink, res);
	}
	/* After its job the worker exits by itself; a sandbox that does not
	 * is killed. */
	sb_worker_destroy_after(w, sb_sup_policy.exit_grace_ms);
	res->duration_ms = sb_now_ms() - start;
	return 0;
}
