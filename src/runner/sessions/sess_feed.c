/* The supervisor's feeders for a session: a call in the session's
 * interpreter, and a background job in the session's sandbox. Both take
 * their frames from an inbox the pump fills (runner/sessions/sess.h). A call stops
 * softly first (an interrupt: KeyboardInterrupt, SIGINT to a shell), then
 * hard: the controller kills the interpreter and starts a new one, and the
 * call's result says the state was lost. A job stops hard at once (its
 * processes are killed; the session lives on). */
#include "runner/sessions/sess_feed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/display_kinds.h"
#include "core/paths.h"
#include "runner/capture.h"
#include "util/clock.h"
#include "util/fd.h"

static struct sess_feeder *sf(const struct sb_feeder *f)
{
	return (struct sess_feeder *)f;
}

static int sf_fds(struct sb_feeder *f, struct sb_sup *s, struct pollfd *p)
{
	(void)s;
	p[0] = (struct pollfd){sf(f)->in.efd, POLLIN, 0};
	return 1;
}

int sess_feeder_decode(struct sess_feeder *x, const struct sess_frame *fr, struct sb_wp_event *ev, char *why,
		       size_t n)
{
	struct sb_wp_frame frame = {fr->type, fr->hdr, fr->payload, fr->n};
	x->wj.started = x->wj.started || x->started; /* (a job's start, jobs.c, may set it) */
	if (!sb_wp_job_decode(&x->wj, &frame, ev, why, n)) {
		x->started = x->wj.started;
		return 0;
	}
	/* It runs beside untrusted code: the session ends, as a warm
	 * worker's sandbox is killed. */
	sess_kill(x->s, false, "its controller broke the protocol (%s)", why);
	x->broken = true;
	return -1;
}

/* A path the controller says the call wrote: relative to the workspace,
 * no empty, "." or ".." segment, no control character, not too long. It
 * becomes part of a URI a client may read back (resources/read checks it
 * again, as the file tools do). */
static bool written_path_ok(const char *p)
{
	size_t n = strlen(p);
	if (n == 0 || n > SB_WRITTEN_PATH_MAX || p[0] == '/')
		return false;
	for (const char *q = p; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			return false;
	for (const char *seg = p;;) {
		const char *end = strchr(seg, '/');
		size_t k = end ? (size_t)(end - seg) : strlen(seg);
		if (k == 0 || (k == 1 && seg[0] == '.') || (k == 2 && seg[0] == '.' && seg[1] == '.'))
			return false;
		if (!end)
			return true;
		seg = end + 1;
	}
}

/* The files the call wrote (written.py): at most SB_WRITTEN_MAX kept. */
static void take_written(struct sess_feeder *x, json_t *hdr)
{
	json_t *a = json_object_get(hdr, "files"), *more = json_object_get(hdr, "files_more"), *v;
	size_t i;
	if (!json_is_array(a))
		return;
	json_decref(x->written);
	x->written = json_array();
	json_array_foreach(a, i, v) {
		if (json_is_string(v) && written_path_ok(json_string_value(v)) &&
		    json_array_size(x->written) < SB_WRITTEN_MAX)
			json_array_append(x->written, v);
	}
	if (json_is_integer(more) && json_integer_value(more) > 0 && json_integer_value(more) < 1000000000)
		x->written_more = (unsigned)json_integer_value(more);
}

static void on_event(struct sess_feeder *x, struct sb_sup *s, const struct sb_wp_event *ev)
{
	switch (ev->type) {
	case SB_WP_OUT:
		sb_sup_output(s, (enum sb_stream_id)ev->stream, ev->payload, ev->payload_len);
		return;
	case SB_WP_DONE:
		x->exit_code = ev->exit_code;
		x->signal = ev->signal;
		x->interrupted = ev->flags & SB_WP_DONE_INTERRUPTED;
		x->restarted = ev->flags & SB_WP_DONE_RESTARTED;
		x->killed = ev->flags & SB_WP_DONE_KILLED;
		if (ev->reason)
			snprintf(x->reason, sizeof x->reason, "%s", ev->reason);
		take_written(x, ev->hdr);
		x->ws_changed = json_is_true(json_object_get(ev->hdr, "ws_dirty"));
		if (json_is_object(json_object_get(ev->hdr, "state"))) {
			json_decref(x->state);
			x->state = json_incref(json_object_get(ev->hdr, "state"));
		}
		x->done = true;
		sb_sup_finish(s);
		return;
	case SB_WP_REPLY: /* the controller refused a job (it was busy) */
		snprintf(x->error, sizeof x->error, "%s", ev->error ? ev->error : "refused");
		sb_sup_broken(s, "the session refused the job: %s", x->error);
		return;
	default: /* started: kept by sess_feeder_decode */
		return;
	}
}

static void sf_ready(struct sb_feeder *f, struct sb_sup *s, const struct pollfd *p, int n)
{
	struct sess_feeder *x = sf(f);
	(void)n;
	(void)p; /* (the inbox's eventfd clears itself when its last frame is taken) */
	struct sess_frame *fr;
	while (!x->done && !x->broken && (fr = sess_pop(x->s, &x->in))) {
		struct sb_wp_event ev;
		char bad[128];
		if (sess_feeder_decode(x, fr, &ev, bad, sizeof bad))
			sb_sup_broken(s, "session %s ended: its controller broke the protocol (%s)", x->s->id, bad);
		else
			on_event(x, s, &ev);
		sess_frame_free(fr);
	}
	char why[400];
	if (!x->done && !x->broken && sess_dead(x->s, why, sizeof why)) {
		sb_sup_broken(s, "session %s ended: %s", x->s->id, why);
		/* (the pump set it before it ended the session, under its lock) */
		s->out_of_memory = x->s->w->out_of_memory;
	}
}

static void send_stop(struct sess_feeder *x, const char *type)
{
	sess_send(x->s, json_pack("{s:s, s:I}", "type", type, "id", x->in.id), NULL, 0);
}

static void sf_soft_stop(struct sb_feeder *f, struct sb_sup *s)
{
	(void)s;
	send_stop(sf(f), "interrupt");
}

static void sf_hard_kill(struct sb_feeder *f)
{
	struct sess_feeder *x = sf(f);
	if (!x->kill_sent && !sess_dead(x->s, NULL, 0))
		send_stop(x, x->job ? "jobkill" : "kill");
	x->kill_sent = true;
}

static bool sf_drained(const struct sb_feeder *f)
{
	/* (a job the controller refused: nothing of it runs) */
	return sf(f)->done || sf(f)->error[0] || sess_dead(sf(f)->s, NULL, 0);
}

static const struct sb_feeder_ops call_ops = {
	.fds = sf_fds, .ready = sf_ready, .soft_stop = sf_soft_stop, .hard_kill = sf_hard_kill, .drained = sf_drained,
};
/* A job has no soft stop: cancel and timeout kill it at once. */
static const struct sb_feeder_ops job_ops = {
	.fds = sf_fds, .ready = sf_ready, .soft_stop = NULL, .hard_kill = sf_hard_kill, .drained = sf_drained,
};

int sess_feeder_init(struct sess_feeder *x, struct sess *s, bool job)
{
	memset(x, 0, sizeof *x);
	x->f.ops = job ? &job_ops : &call_ops;
	x->s = s;
	x->job = job;
	x->exit_code = -1;
	if (sess_route(s, &x->in))
		return -1;
	/* A call gets output and done (its run frame starts it); a job also
	 * started, and a reply when the controller refuses it. Neither waits
	 * for started: a job's output may race its started frame, and a job
	 * cancelled before it was reported ends without one. */
	x->wj = (struct sb_wp_job){
		.id = x->in.id,
		.types = 1u << SB_WP_OUT | 1u << SB_WP_DONE | (job ? 1u << SB_WP_STARTED | 1u << SB_WP_REPLY : 0),
		.done_needs = job ? SB_WP_DONE_KILLED : SB_WP_DONE_INTERRUPTED | SB_WP_DONE_RESTARTED,
	};
	return 0;
}

void sess_feeder_fini(struct sess_feeder *x)
{
	sess_unroute(x->s, &x->in);
	json_decref(x->written);
	x->written = NULL;
	json_decref(x->state);
	x->state = NULL;
}

json_t *sess_sandbox_json(struct sess *s)
{
	json_t *o = s->w->sb.enforced ? json_deep_copy(s->w->sb.enforced) : json_object();
	json_object_set_new(o, "session", json_pack("{s:s, s:s, s:s, s:s}", "id", s->id, "lang", sb_lang_name(s->lang),
						     "workspace", SB_SANDBOX_WORKSPACE, "memory_limit",
						     s->w->sb_limits.memory));
	return o;
}

static bool run(struct sess *s, const struct sb_job *job, const char *op, const struct sb_run_hooks *hooks,
		struct sb_result *res, struct sb_session_verdict *v, json_t **state)
{
	struct sess_feeder x;
	struct sb_capture_sink cap;
	/* The call's figures are saved in the workspace as figure-N.png; the
	 * result names them so. */
	if (sess_feeder_init(&x, s, false) ||
	    sb_capture_sink_init(&cap, job->limits.output_bytes, SB_SANDBOX_WORKSPACE)) {
		res->internal_error = strdup("out of memory");
		return false;
	}
	/* (an interact it displays is moved in this session) */
	snprintf(cap.display.session, sizeof cap.display.session, "%s", s->id);
	struct sb_sup sup;
	unsigned net_mark = sb_netproxy_mark(&s->w->net);
	sb_sup_init(&sup, &x.f, &cap.sink, (uint64_t)job->limits.timeout_s * 1000, hooks, NULL);
	json_t *h = json_pack("{s:s, s:I, s:s}", "type", "run", "id", x.in.id, "lang", sb_lang_name(job->lang));
	json_object_set_new(h, "code_bytes", json_integer((json_int_t)job->code_len));
	json_object_set_new(h, "display", sb_display_caps_json());
	if (job->interact) /* (the code is its values: driver/interact.py) */
		json_object_set_new(h, "interact", json_string(job->interact));
	if (op)
		json_object_set_new(h, "op", json_string(op));
	if (sess_send(s, h, job->code, job->code_len))
		sb_sup_broken(&sup, "session %s ended before the call could start", s->id);
	else
		sb_sup_run(&sup);
	if (x.done) {
		res->exit_code = x.exit_code;
		res->signal = x.signal;
	} else if (sup.killed && !sess_dead(s, NULL, 0)) {
		/* A hard stop the controller did not confirm: it is stuck. */
		sess_kill(s, false, "it stopped answering when its code had to be stopped, and was closed");
		sb_sup_broken(&sup, "session %s stopped answering and was closed", s->id);
	}
	char why[400];
	if (!x.done && sess_dead(s, why, sizeof why)) {
		v->closed = true;
		snprintf(v->reason, sizeof v->reason, "%s", why);
	}
	v->interrupted = x.interrupted;
	v->restarted = x.restarted;
	if (x.restarted)
		snprintf(v->reason, sizeof v->reason, "%s", x.reason);
	sb_sup_verdict(&sup, res);
	sb_capture_sink_finish(&cap, res);
	res->duration_ms = sb_now_ms() - sup.start;
	res->sandbox = sess_sandbox_json(s);
	res->written = x.written;
	res->written_more = x.written_more;
	x.written = NULL;
	if (x.done)
		v->ws_changed = x.ws_changed;
	if (state) {
		*state = x.state;
		x.state = NULL;
	}
	sb_netproxy_refusals(&s->w->net, net_mark, res);
	bool done = x.done;
	sess_feeder_fini(&x);
	return done;
}

bool sess_run_call(struct sess *s, const struct sb_job *job, const struct sb_run_hooks *hooks, struct sb_result *res,
		   struct sb_session_verdict *v)
{
	return run(s, job, NULL, hooks, res, v, NULL);
}

bool sess_run_op(struct sess *s, const char *op, const struct sb_job *job, struct sb_result *res,
		 struct sb_session_verdict *v, json_t **state)
{
	return run(s, job, op, NULL, res, v, state);
}
