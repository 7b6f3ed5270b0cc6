/* One warm worker, host side: a sandbox whose command is the driver in
 * worker mode (src/worker/driver.py), spoken to over the framed protocol
 * (wproto.h). The host never trusts it: a job has the host's own deadline
 * and output caps, and any protocol violation or death kills the whole
 * sandbox. Not thread-safe: one thread uses a worker at a time (the pool
 * hands it out); only sb_worker_kill may be called from another thread. */
#ifndef SAGEBOX_WORKER_H
#define SAGEBOX_WORKER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "core/job.h"
#include "core/result.h"
#include "net/spawn.h"
#include "runner/hooks.h"
#include "runner/supervise.h"
#include "runner/warm/wproto.h"
#include "sandbox/sandbox.h"
#include "util/buf.h"
#include "util/error.h"

/* What a worker has imported: Sage jobs need a Sage worker; Python and
 * shell jobs share a plain interpreter (its memory baseline is Python's,
 * as in a fresh sandbox). */
enum sb_wkind { SB_WKIND_SAGE, SB_WKIND_PLAIN };

enum sb_wkind sb_wkind_for(enum sb_lang lang);
const char *sb_wkind_name(enum sb_wkind k);

/* Memory a worker's sandbox gets on top of the job's limit, for the worker
 * itself (Sage and its warm-ups, shared copy-on-write with each job). */
uint64_t sb_wkind_allowance(enum sb_wkind k);

/* The limits of a worker's sandbox for jobs with limits l. */
void sb_worker_sandbox_limits(enum sb_wkind k, const struct sb_limits *l, struct sb_limits *out);

struct sb_worker {
	enum sb_wkind kind;
	/* A fresh sandbox's worker (fresh isolation): its sandbox has the job's
	 * own limits, it gets its one job before it is ready, and it exits
	 * after it. */
	bool fresh;
	unsigned lifetime_s;          /* fresh: the backend's backstop */
	struct sb_limits job_limits;  /* the jobs it serves (timeout aside) */
	struct sb_limits sb_limits;   /* its sandbox's */
	struct sb_sandbox sb;
	struct sb_netslot net;        /* network set: its own proxy socket */
	bool spawned;
	/* sb_worker_died_how found the kernel's oom_kill count > 0: the
	 * result says it ran out of memory, not that the sandbox failed. */
	bool out_of_memory;
	int pidfd;
	struct sb_wp_reader rd;
	struct sb_buf diag;           /* the worker's stderr (last bytes) */
	json_t *ready;                /* its ready frame */
	uint64_t spawned_ms, ready_ms;
	unsigned jobs;                /* jobs handed to it */
	int64_t next_id;
	char pid_inside[24];
	char budget[24];              /* argv string: MiB for the worker itself */
	char role[48];                /* in messages: "the warm sage worker", "session s_…" */
};

/* A new worker object (nothing started). */
struct sb_worker *sb_worker_new(enum sb_wkind kind, const struct sb_limits *job_limits);
/* The same for one job in a fresh sandbox with the job's own limits. */
struct sb_worker *sb_worker_new_fresh(enum sb_wkind kind, const struct sb_limits *job_limits);
/* Start its sandbox (returns quickly)... */
int sb_worker_spawn(struct sb_worker *w, const struct sb_config *cfg, const struct sb_backend *be,
		    struct sb_error *err);
/* Or start its sandbox with another request (a session's controller). */
/* network set: the audit names connections from this sandbox made from now
 * on as "ROLE, client OWNER, WHAT ID" (a call, a session, a job). No-op
 * without a proxy socket. */
void sb_worker_net_serves(const struct sb_worker *w, const char *owner, const char *what, const char *id);
int sb_worker_spawn_req(struct sb_worker *w, const struct sb_backend *be, const struct sb_sandbox_req *req,
			struct sb_error *err);
/* ... then wait until the worker has imported and says ready. */
int sb_worker_wait_ready(struct sb_worker *w, struct sb_error *err);
/* An idle worker must be silent and alive; false: discard it. */
bool sb_worker_idle_ok(struct sb_worker *w);
/* Kill the whole sandbox (any thread; idempotent). */
void sb_worker_kill(struct sb_worker *w);
/* Kill, wait for the sandbox, free. */
void sb_worker_destroy(struct sb_worker *w);
/* The same, but first give the worker grace_ms to exit by itself (a fresh
 * sandbox's worker after its job: no kill when it is gone already). */
void sb_worker_destroy_after(struct sb_worker *w, unsigned grace_ms);

enum sb_wrun {
	SB_WRUN_OK,      /* result filled, the worker can take another job */
	SB_WRUN_BROKEN,  /* result filled; the worker was killed: discard it */
	SB_WRUN_RETRY,   /* the worker failed before the job began: discard
			    it and run the job elsewhere (res untouched) */
};

/* Run one job under the supervisor; its output goes to sink (untouched
 * when the result is SB_WRUN_RETRY: the job has not begun; never for a
 * fresh worker, whose failure to begin is the job's sandbox error). */
enum sb_wrun sb_worker_run(struct sb_worker *w, const struct sb_job *job, const struct sb_run_hooks *hooks,
			   struct sb_sink *sink, struct sb_result *res);

/* Internals shared with worker_job.c. Read what the worker sent into its
 * frame reader (1 at EOF, -1 out of memory); drain its stderr (1 at EOF);
 * say in words how it died. */
int sb_worker_read(struct sb_worker *w);
int sb_worker_drain_diag(struct sb_worker *w);
void sb_worker_died_how(struct sb_worker *w, char *out, size_t n);

json_t *sb_worker_status(const struct sb_worker *w, uint64_t now);

#endif
