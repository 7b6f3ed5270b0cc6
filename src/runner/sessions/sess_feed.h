/* The supervisor's feeders for a session's call and for a background job
 * in a session's sandbox (runner/sessions/sess_feed.c). Internal to src/runner/. */
#ifndef SAGEBOX_SESS_FEED_H
#define SAGEBOX_SESS_FEED_H

#include "runner/sessions/sess.h"
#include "runner/supervise.h"

struct sess_feeder {
	struct sb_feeder f;        /* first: the supervisor's view */
	struct sess *s;
	struct sess_inbox in;      /* its frames; in.id is the request's id */
	bool job;                  /* a job: hard stop only, "jobkill" */
	struct sb_wp_job wj;       /* its frames so far, checked (wproto.h) */
	bool started, done, kill_sent, broken;
	int exit_code, signal;     /* from the done frame */
	bool interrupted, restarted, killed;
	char reason[400];          /* why the interpreter was restarted */
	char error[400];           /* why the controller refused a job */
	json_t *written;           /* the done frame's files, checked (owned) */
	unsigned written_more;
	json_t *state;             /* a save's or restore's report (owned) */
	bool ws_changed;           /* /work differs from the workspace's store */
};

/* Route an inbox for it (0), or -1 when out of resources. */
int sess_feeder_init(struct sess_feeder *x, struct sess *s, bool job);
void sess_feeder_fini(struct sess_feeder *x);
/* One frame of its inbox, checked (wproto.h, sb_wp_job_decode): 0 and
 * *ev; -1 with why when the controller broke the protocol, which ends the
 * session. */
int sess_feeder_decode(struct sess_feeder *x, const struct sess_frame *fr, struct sb_wp_event *ev, char *why,
		       size_t n);

/* A call in the session's interpreter under the supervisor, its output in
 * a head+tail capture as a stateless call's: fills res and v. The caller
 * holds the interpreter (sess_take). Whether the interpreter answered it
 * (its done frame came: v->ws_changed then says whether /work changed,
 * which the caller hands to the workspace side, sess_ws_note_done). */
bool sess_run_call(struct sess *s, const struct sb_job *job, const struct sb_run_hooks *hooks, struct sb_result *res,
		   struct sb_session_verdict *v);
/* The same for one of the interpreter's own operations on the workspace
 * (op "save" or "restore": driver/state.py), with job's limits and no
 * code; *state gets its report (new; NULL when it did not finish). */
bool sess_run_op(struct sess *s, const char *op, const struct sb_job *job, struct sb_result *res,
		 struct sb_session_verdict *v, json_t **state);

/* The backend's verified report of the session's sandbox, with the session
 * (a named workspace's name and cap: sess_ws_describe). */
json_t *sess_sandbox_json(struct sess *s);

#endif
