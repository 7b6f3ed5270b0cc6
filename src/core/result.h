/* The result of one job. Field names follow the seed plugin's result object.
 * `internal_error` is set when the sandbox itself failed (exit status 125),
 * as opposed to the user's code failing, which is a verdict. */
#ifndef SAGEBOX_RESULT_H
#define SAGEBOX_RESULT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/display.h"

struct sb_stream {
	char *data;          /* NUL-terminated; head + marker + tail when truncated */
	size_t len;
	bool truncated;
	uint64_t total_bytes; /* bytes the code wrote to the stream, kept or not */
};

/* A connection the network proxy refused while the job ran, as the proxy
 * reported it (not read from the code's output): which sandbox (its label
 * in the proxy's audit), the host and port asked for, and why. A result
 * keeps the first SB_NET_REFUSALS_MAX. */
#define SB_NET_REFUSALS_MAX 4
struct sb_net_refusal {
	char sandbox[128];
	char host[256];
	unsigned port;
	unsigned status;     /* the proxy's answer: 403 refused, 400 not a request, 502 unreachable, 503 too many */
	char why[200];
};

/* Files one result links at most (the driver's written.py lists as many),
 * and the longest path taken. */
#define SB_WRITTEN_MAX 20
#define SB_WRITTEN_PATH_MAX 1024

struct sb_result {
	int exit_code;        /* -1 when killed by a signal or never started */
	int signal;           /* 0 when none */
	bool timed_out;
	bool output_limit_exceeded;
	bool cancelled;
	/* The sandbox died at its memory limit (the kernel's oom_kill
	 * count): the code's doing, said so, though internal_error is set. */
	bool out_of_memory;
	struct sb_stream out, err;
	uint64_t duration_ms;
	size_t max_bytes_per_stream;
	unsigned timeout_s;
	char *internal_error; /* non-NULL: the sandbox failed, not the code */
	char *hint;           /* what to do about internal_error, or NULL */
	json_t *sandbox;      /* what was enforced, as verified at run time (owned) */
	struct sb_display display; /* what the code displayed, in order (core/display.h) */
	/* A session's call: the files it wrote, new or changed, as paths
	 * relative to the workspace (a JSON array of strings, owned; NULL:
	 * none), at most SB_WRITTEN_MAX, and how many more there were. */
	json_t *written;
	unsigned written_more;
	/* What the network proxy refused this job (and how many more). */
	struct sb_net_refusal net_refused[SB_NET_REFUSALS_MAX];
	unsigned n_net_refused, net_refused_more;
};

void sb_result_init(struct sb_result *r);
void sb_result_free(struct sb_result *r);
/* ok: exited 0, not timed out, no output overflow, no internal error. */
bool sb_result_ok(const struct sb_result *r);
/* A SIGKILL the runner sent itself (timeout, flood, cancel) is its
 * verdict, not a signal the code died of: clear it. */
void sb_result_forget_own_kill(struct sb_result *r);
/* The process exit status `sagebox run` should use: the code's own status,
 * 128+signal when killed by one, 124 on timeout, 125 on sandbox failure. */
int sb_result_exit_status(const struct sb_result *r);
/* The seed-compatible JSON object (new reference); what was displayed as
 * core/display_out.h gives it (a figure's metadata, never its bytes). */
json_t *sb_result_to_json(const struct sb_result *r);
/* The declarations (core/interact.h) of the interacts the result
 * displayed, in order: a new reference to an array, empty when none. */
json_t *sb_result_interacts(const struct sb_result *r);
/* One line for a model or a person: "exit status 0", "timed out after 30 s"... */
void sb_result_verdict(const struct sb_result *r, char *buf, size_t size);

#endif
