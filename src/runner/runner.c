#include "runner/runner.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "net/spawn.h"
#include "packages/packages.h"
#include "runner/backend.h"
#include "runner/sessions/sess.h"
#include "runner/capture.h"
#include "runner/jobs/jobs.h"
#include "runner/sage/locate.h"
#include "runner/sessions/sessions.h"
#include "runner/warm/driver_code.h"
#include "runner/warm/fresh.h"
#include "runner/warm/pool.h"
#include "runner/warm/warm.h"
#include "sandbox/sandbox.h"

struct sb_runner {
	struct sb_config cfg;
	struct sb_backend *backend;
	struct sb_error backend_err; /* why no backend, when backend is NULL */
	struct sb_pool *pool;        /* warm isolation only */
	pthread_mutex_t sessions_lock;
	struct sb_sessions *sessions; /* made at first use */
	struct sb_sage_found found;   /* Sage's Python: which, and how it was found */
	bool python_ok;               /* found; else python_err says why */
	struct sb_error python_err;
};

/* The runner's gauges, at each scrape (metrics/metrics.h): the warm
 * workers, the spares, sessions and background jobs (started ones only:
 * nothing starts for a scrape). */
static void collect(void *ctx)
{
	struct sb_runner *r = ctx;
	if (r->pool)
		sb_pool_metrics(r->pool);
	pthread_mutex_lock(&r->sessions_lock);
	struct sb_sessions *ss = r->sessions;
	pthread_mutex_unlock(&r->sessions_lock);
	if (ss) {
		sb_sessions_metrics(ss, r->cfg.metrics_by_client);
		sb_jobs_metrics(ss, r->cfg.metrics_by_client);
	}
}

struct sb_runner *sb_runner_new(const struct sb_config *cfg, struct sb_error *err)
{
	struct sb_runner *r = calloc(1, sizeof *r);
	if (!r) {
		sb_fail(err, "out of memory");
		return NULL;
	}
	r->cfg = *cfg;
	pthread_mutex_init(&r->sessions_lock, NULL);
	/* A missing backend is not fatal here: status must still be able to
	 * say what is wrong, and each job reports it as a sandbox error. */
	r->backend = sb_runner_backend_open(&r->cfg, &r->backend_err);
	/* network set: the proxy, before any sandbox (net/spawn.h). Every
	 * isolated backend binds a sandbox's own socket directory into it
	 * (native: session_mounts.c; podman and docker: args.c). The host
	 * backend confines nothing: its code has the whole network, and a
	 * list would promise a limit that does not hold. */
	if (r->backend && r->cfg.net.n && !sb_backend_has(r->backend, SB_CAP_ISOLATED)) {
		sb_fail(&r->backend_err, "network = %s: the %s backend does not isolate the code, which has the "
					 "host's whole network: an allow-list cannot hold there",
			r->cfg.network, sb_backend_name(r->backend));
		sb_hint(&r->backend_err, "use --backend native or podman, or set network = none (the default)");
		sb_backend_close(r->backend);
		r->backend = NULL;
	}
	if (r->backend && sb_netproxy_start(&r->cfg, &r->backend_err)) {
		sb_backend_close(r->backend);
		r->backend = NULL;
	}
	/* Before any worker: the workers run the python it finds. Not found,
	 * the backend stays open for status, and every job says why. */
	r->python_ok = r->backend && sb_sage_locate(r->backend, &r->cfg, &r->found, &r->python_err) == 0;
	if (r->python_ok && r->cfg.isolation == SB_ISOLATION_WARM) {
		r->pool = sb_pool_new(&r->cfg, r->backend);
		if (!r->pool) {
			sb_backend_close(r->backend);
			sb_sage_found_clear(&r->found);
			free(r);
			sb_fail(err, "out of memory");
			return NULL;
		}
	}
	sb_metrics_collector_add(collect, r);
	return r;
}

void sb_runner_free(struct sb_runner *r)
{
	if (!r)
		return;
	sb_metrics_collector_remove(collect, r);
	/* Sessions and jobs end first: nothing of them outlives sagebox. */
	sb_sessions_free(r->sessions);
	pthread_mutex_destroy(&r->sessions_lock);
	sb_pool_free(r->pool);
	sb_netproxy_stop();
	sb_backend_close(r->backend);
	sb_sage_found_clear(&r->found);
	free(r);
}

void sb_runner_prestart(struct sb_runner *r, enum sb_lang lang)
{
	if (r->pool)
		sb_pool_prestart(r->pool, lang);
}

/* The one place "no backend" is checked: false with err saying why. */
static bool usable(const struct sb_runner *r, struct sb_error *err)
{
	if (!r->backend)
		*err = r->backend_err;
	else if (!r->python_ok)
		*err = r->python_err; /* the backend is open (for status), Sage's Python not found */
	return r->backend && r->python_ok;
}

struct sb_sessions *sb_runner_sessions(struct sb_runner *r, struct sb_error *err)
{
	if (!usable(r, err))
		return NULL;
	pthread_mutex_lock(&r->sessions_lock);
	if (!r->sessions)
		r->sessions = sb_sessions_new(&r->cfg, r->backend, &sb_jobs_tenant);
	struct sb_sessions *ss = r->sessions;
	pthread_mutex_unlock(&r->sessions_lock);
	if (!ss)
		sb_fail(err, "out of memory");
	return ss;
}

/* The sessions if they started, else NULL (never starts them). */
static struct sb_sessions *started_sessions(struct sb_runner *r)
{
	pthread_mutex_lock(&r->sessions_lock);
	struct sb_sessions *ss = r->sessions;
	pthread_mutex_unlock(&r->sessions_lock);
	return ss;
}

void sb_runner_end_owner(struct sb_runner *r, const char *owner)
{
	struct sb_sessions *ss = r ? started_sessions(r) : NULL;
	if (ss)
		sb_sessions_end_owner(ss, owner);
}

unsigned sb_runner_in_use(struct sb_runner *r)
{
	struct sb_sessions *ss = r ? started_sessions(r) : NULL;
	return ss ? sb_sessions_in_use(ss) : 0;
}

const struct sb_config *sb_runner_config(const struct sb_runner *r)
{
	return &r->cfg;
}

/* A call of its own: a warm worker or a fresh sandbox, its output in a
 * head+tail capture of each stream under the job's cap. */
static void run_stateless(struct sb_runner *r, const struct sb_job *job, const struct sb_run_hooks *hooks,
			  struct sb_result *res)
{
	struct sb_capture_sink cs;
	if (sb_capture_sink_init(&cs, job->limits.output_bytes, NULL)) {
		res->internal_error = strdup("out of memory");
		return;
	}
	int rc = r->pool ? sb_run_warm(r->pool, job, hooks, &cs.sink, res)
			 : sb_run_fresh(&r->cfg, r->backend, job, hooks, &cs.sink, res);
	sb_capture_sink_finish(&cs, res);
	if (rc < 0 && !res->internal_error)
		res->internal_error = strdup("the runner failed without saying why");
	if (res->sandbox && json_is_object(res->sandbox)) {
		/* What the runner itself enforces, on top of the backend. */
		json_object_set_new(res->sandbox, "isolation", json_string(r->pool ? "warm" : "fresh"));
		json_object_set_new(res->sandbox, "timeout_seconds", json_integer(job->limits.timeout_s));
		json_object_set_new(res->sandbox, "output_limit_bytes_per_stream",
				    json_integer((json_int_t)job->limits.output_bytes));
	}
}

void sb_run_out_free(struct sb_run_out *o)
{
	sb_result_free(&o->res);
}

int sb_runner_run(struct sb_runner *r, const struct sb_job *job, const struct sb_run_hooks *hooks,
		  struct sb_run_out *out)
{
	memset(out, 0, sizeof *out);
	sb_result_init(&out->res);
	out->res.timeout_s = job->limits.timeout_s;
	out->res.max_bytes_per_stream = job->limits.output_bytes;
	if (!usable(r, &out->err)) {
		out->unusable = true;
		if (job->kind != SB_JOB_STATELESS)
			return -1;
		out->res.internal_error = strdup(out->err.msg);
		if (out->err.hint[0])
			out->res.hint = strdup(out->err.hint);
		return 0;
	}
	if (job->kind == SB_JOB_STATELESS) {
		run_stateless(r, job, hooks, &out->res);
		return 0;
	}
	struct sb_sessions *ss = sb_runner_sessions(r, &out->err);
	if (!ss) {
		out->unusable = true;
		return -1;
	}
	if (job->kind == SB_JOB_SESSION)
		return sb_session_run(ss, job->owner, job->session, job, hooks, &out->res, &out->session, &out->err);
	return sb_job_start(ss, job->owner, job->lang, job->code, job->code_len, job->session, job->limits.timeout_s,
			    out->job_id, &out->err);
}

/* The user's project folder as sessions get it (or why they do not). */
static json_t *project_status(const struct sb_config *cfg, const struct sb_backend *be)
{
	if (!cfg->project_dir[0])
		return json_pack("{s:b, s:s}", "bound", 0, "note", "off (project_dir is not set)");
	json_t *o = json_pack("{s:s, s:b}", "dir", cfg->project_dir, "bound", sess_project_bound(cfg, be));
	if (cfg->http_clients)
		json_object_set_new(o, "note", json_string("not bound: over HTTP every token's sessions would share "
							   "it; project_dir is the local user's, for stdio"));
	else if (!sb_backend_has(be, SB_CAP_PROJECT))
		json_object_set_new(o, "note", json_sprintf("not bound: the %s backend cannot bind it with the "
							    "code's files owned by you (native and podman can)",
							    sb_backend_name(be)));
	else
		json_object_update_new(o, json_pack("{s:s, s:s, s:s}", "at", SB_PROJECT_MOUNT, "in",
						    "every session (the local user's)", "code_can",
						    cfg->project_exec
							    ? "create, change and remove files and directories, and "
							      "run them (project_exec); no symlink, FIFO, socket, device node "
							      "or setuid/setgid file; its .git is read-only"
							    : "create, change and remove files and directories; nothing "
							      "there runs (noexec); no symlink, FIFO, socket, device node or "
							      "setuid/setgid file; its .git is read-only"));
	return o;
}

json_t *sb_runner_status(struct sb_runner *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "settings", sb_config_to_json(&r->cfg));
	json_t *pk = sb_packages_status();
	if (pk)
		json_object_set_new(o, "packages", pk);
	if (!r->backend) {
		json_object_set_new(o, "ok", json_false());
		json_object_set_new(o, "backend", json_pack("{s:s, s:b, s:s, s:s}", "name",
							    r->cfg.backend, "available", 0,
							    "error", r->backend_err.msg, "hint", r->backend_err.hint));
		return o;
	}
	json_t *b = sb_backend_status(r->backend);
	if (!r->python_ok) {
		json_object_set_new(o, "ok", json_false());
		json_object_set_new(o, "sage_python", json_pack("{s:s, s:s}", "error", r->python_err.msg, "hint",
								 r->python_err.hint));
		json_object_set_new(o, "backend", b);
		return o;
	}
	json_object_set_new(o, "sage_python", sb_sage_found_json(&r->found));
	/* The backend was opened before the python was found: its check is
	 * of the setting's value. One that answered is there ("found": the
	 * text shows sage_python's row instead, status_backends.c). */
	if (json_object_get(b, "python") && strncmp(r->found.how, "the python setting (not", 23) != 0)
		json_object_set_new(b, "python", json_pack("{s:s, s:b, s:b}", "path", r->found.python, "present", 1,
							   "found", 1));
	json_object_set_new(o, "ok", json_boolean(json_is_true(json_object_get(b, "available"))));
	json_object_set_new(o, "backend", b);
	json_object_set_new(o, "isolation", json_string(r->pool ? "warm" : "fresh"));
	if (sb_backend_has(r->backend, SB_CAP_HOST_FILES))
		json_object_set_new(o, "driver_code", sb_driver_code_status(r->cfg.python));
	/* The network policy as enforced: the list, and whether its proxy runs. */
	pid_t proxy = sb_netproxy_pid();
	json_object_set_new(o, "network", r->cfg.net.n ? json_pack("{s:s, s:b, s:I}", "allow", r->cfg.network,
								      "proxy_running", proxy > 0, "proxy_pid",
								      (json_int_t)proxy)
						     : json_pack("{s:s}", "allow", "none"));
	if (r->pool)
		json_object_set_new(o, "pool", sb_pool_status(r->pool));
	json_object_set_new(o, "project", project_status(&r->cfg, r->backend));
	return o;
}
