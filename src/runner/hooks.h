/* What a caller hands a run besides the job, and what a session call gives
 * back besides its result: the hooks (progress, cancel, watch, admit), the
 * sizes of the ids of owners, sessions and jobs, and the session verdict.
 * Shared by the entry (runner.h), the supervisor and every room, so that
 * none of them needs the entry's header. */
#ifndef SAGEBOX_RUNNER_HOOKS_H
#define SAGEBOX_RUNNER_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/handle.h"

struct sb_sup;

struct sb_progress {
	uint64_t elapsed_ms;
	uint64_t stdout_bytes, stderr_bytes;  /* written so far */
	const char *stdout_tail;              /* last bytes of stdout so far (valid UTF-8) */
	size_t stdout_tail_len;
};

struct sb_run_hooks {
	/* Called from the job's thread about every progress_interval_ms while
	 * the job runs (not at all when NULL). */
	void (*progress)(void *ctx, const struct sb_progress *p);
	void *ctx;
	unsigned progress_interval_ms; /* 0: the supervisor's default (supervise.c) */
	/* When this fd becomes readable the job is cancelled: its sandbox is
	 * killed and the result has cancelled=true. -1: not cancellable. */
	int cancel_fd;
	/* Called from the job's thread with the job's supervisor when it
	 * starts, and with NULL when it ends (again per attempt when a warm job
	 * is retried). In between, another thread may call sb_sup_status(s)
	 * (runner/supervise.h) on it, under a lock it shares with this hook.
	 * NULL: not called. */
	void (*watch)(void *ctx, const struct sb_sup *s);
	/* A session run (sb_session_run) calls it once it has the session's
	 * turn, before anything runs: the caller takes its job slot there, so
	 * that a call waiting behind its session's busy turn holds none. false:
	 * the call was cancelled meanwhile (nothing runs). NULL: not called. */
	bool (*admit)(void *ctx);
};

#define SB_SESSION_ID_LEN SB_HANDLE_LEN /* a handle (core/handle.h): s_ or j_, the instance, 32 hex digits */
#define SB_OWNER_MAX 64      /* a client's owner id, NUL included */

/* What a call in a session did to the session, besides its result. */
struct sb_session_verdict {
	bool interrupted;      /* it was interrupted (timeout, cancel, flood) */
	bool restarted;        /* the interpreter was restarted: variables gone */
	bool closed;           /* the session itself ended (it stopped answering) */
	char reason[400];      /* why, when restarted or closed */
	/* A named workspace's session: its name, and what became of the
	 * call's files on disk ("" nothing changed; saved tells which). */
	char workspace[72];
	char kept[600];
	bool kept_failed;      /* changes were NOT saved (kept says why) */
	bool ws_changed;       /* the call changed /work */
};

#endif
