/* The run tools: their descriptions for a model, the shape of their result,
 * and the handler that turns checked arguments into a job for the runner. */
#include "tools/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

#include "core/display_out.h"
#include "core/limits.h"
#include "packages/packages.h"
#include "tools/links.h"
#include "tools/result_text.h"
#include "tools/sessions.h"

/* What every run tool's description says about the sandbox and its limits. */
static void limits_text(char *buf, size_t size, const struct sb_config *cfg)
{
	char net[1400];
	sb_netlist_model_text(&cfg->net, net, sizeof net);
	snprintf(buf, size,
		 "Without session_id every call starts fresh: nothing is kept between calls, so define "
		 "everything you use in the same call; with a session_id from session_open the code runs in "
		 "that session, where variables, functions and files in /work persist between calls. Limits: %u s wall clock by default (pass timeout_seconds, up to %d, for "
		 "longer work), %s of memory, %zu KiB of output per stream (longer output is cut in the "
		 "middle, so print summaries rather than huge objects), at most %d characters of code. "
		 "%s. There is no access to the user's files: the sandbox sees only a "
		 "read-only system and a scratch /tmp, which is discarded after the call without a session_id and "
		 "kept for the session's life with one. A failure of your "
		 "code comes back as an error result with its traceback; fix the code and call again. If "
		 "the result says the sandbox itself failed, call sandbox_status and tell the user what it "
		 "reports.",
		 cfg->limits.timeout_s, SB_TIMEOUT_MAX_S, cfg->limits.memory, cfg->limits.output_bytes / 1024,
		 SB_CODE_MAX_CHARS, net);
}

/* The tool's own text, the user's packages when it can import them (a
 * shell's python3 does not add them), then the limits. Made at each
 * tools/list: a package added while the server runs is named. */
static char *with_limits(const struct sb_config *cfg, const char *intro, bool packages)
{
	char limits[4096], pk[SB_PACKAGES_TEXT_MAX] = "", *out = NULL;
	limits_text(limits, sizeof limits, cfg);
	if (packages)
		sb_packages_model_text(pk);
	return intro && asprintf(&out, "%s %s%s%s", intro, pk, pk[0] ? " " : "", limits) >= 0 ? out : NULL;
}

char *sb_run_sage_description(const struct sb_config *cfg)
{
	return with_limits(cfg,
			   "Run SageMath code in an isolated sandbox and return what it prints. Use it for exact "
			   "and symbolic mathematics: polynomials and factoring, algebra, number theory, calculus, "
			   "linear algebra, combinatorics, groups, elliptic curves, exact or high-precision "
			   "numerics. The code is a Sage script: Sage's preparser applies, so `R.<x> = QQ[]` "
			   "defines a polynomial ring, `^` is a power and `1/3` is an exact rational (use `n()` or "
			   "`RR` for decimals); use `var('y')` for symbolic variables. Show results with "
			   "`print(...)`; the value of a bare expression on the last line is shown too (end the "
			   "line with `;` to hide it). Plots (`show(p)`, a plot on the last line) come back as "
			   "PNG images.",
			   true);
}

char *sb_run_python_description(const struct sb_config *cfg)
{
	return with_limits(cfg,
			   "Run Python 3 code in the same isolated sandbox as run_sagemath and return what it "
			   "prints. Use it for general computation, simulations, string and data processing that "
			   "do not need Sage's syntax (Sage's modules are importable: `from sage.all import *`). "
			   "Show results with `print(...)`; the value of a bare "
			   "expression on the last line is shown too. matplotlib figures (`plt.show()`, or left "
			   "open at the end) come back as PNG images.",
			   true);
}

char *sb_run_shell_description(const struct sb_config *cfg)
{
	char *intro = NULL;
	if (asprintf(&intro,
		     "Run a POSIX shell script (%s) in the same isolated sandbox as run_sagemath and return "
		     "its stdout and stderr. Use it for small command-line tasks inside the sandbox, such as "
		     "checking which programs are available or running a command-line math tool; not for "
		     "inspecting the user's machine, which the sandbox cannot see.",
		     cfg->shell) < 0)
		intro = NULL;
	char *out = with_limits(cfg, intro, false);
	free(intro);
	return out;
}

char *sb_run_timeout_description(const struct sb_config *cfg)
{
	char *out = NULL;
	if (asprintf(&out, "Wall-clock limit in seconds, %d to %d. Default: %u.", SB_TIMEOUT_MIN_S, SB_TIMEOUT_MAX_S,
		     cfg->limits.timeout_s) < 0)
		return NULL;
	return out;
}

/* The shape of sb_result_to_json (the seed's result object). Open to
 * additions (no additionalProperties: false), so a new field in the result
 * never breaks a client that validates structuredContent. */
json_t *sb_run_output_schema(void)
{
	json_t *o = json_pack(
		"{s:s, s:{s:{s:s}, s:{s:[s,s]}, s:{s:[s,s]}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s},"
		" s:{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}},"
		" s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:[s,s]}},"
		" s:[s,s,s,s,s,s,s,s]}",
		"type", "object", "properties",
		"ok", "type", "boolean",
		"exit_code", "type", "integer", "null",
		"signal", "type", "string", "null",
		"timed_out", "type", "boolean",
		"output_limit_exceeded", "type", "boolean",
		"cancelled", "type", "boolean",
		"stdout", "type", "string",
		"stderr", "type", "string",
		"truncated", "type", "object", "properties",
		"stdout", "type", "boolean", "stderr", "type", "boolean", "max_bytes_per_stream", "type",
		"integer", "stdout_total_bytes", "type", "integer", "stderr_total_bytes", "type", "integer",
		"duration_ms", "type", "integer",
		"timeout_seconds", "type", "integer",
		"error", "type", "string",
		"hint", "type", "string",
		"sandbox", "type", "object", "null",
		"required", "ok", "exit_code", "signal", "timed_out", "output_limit_exceeded", "stdout", "stderr",
		"duration_ms");
	json_t *props = json_object_get(o, "properties");
	/* What was displayed (core/display_out.h): its kinds' entries, a
	 * figure's metadata (its bytes are its image content block), and what
	 * was not shown. */
	sb_display_schema(props);
	/* What the network proxy refused the call, as it reported it. */
	json_object_set_new(props, "network_refused",
			    json_pack("{s:s, s:{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}}}", "type", "array",
				      "items", "type", "object", "properties", "sandbox", "type", "string", "host",
				      "type", "string", "port", "type", "integer", "status", "type", "integer", "why",
				      "type", "string"));
	json_object_set_new(props, "network_refused_more", json_pack("{s:s}", "type", "integer"));
	return o;
}

/* The result when there is no runner: the same shape as a run's result,
 * with the reason as a sandbox error. */
static void no_runner_result(const struct sb_tool_server *srv, unsigned timeout_s, struct sb_result *res)
{
	res->internal_error = strdup(srv->runner_err.msg[0] ? srv->runner_err.msg : "the runner could not be created");
	if (srv->runner_err.hint[0])
		res->hint = strdup(srv->runner_err.hint);
	res->timeout_s = timeout_s;
	res->max_bytes_per_stream = srv->cfg->limits.output_bytes;
}

/* What a call did to its session, after the result's own text. */
static void session_note(struct sb_buf *b, const char *sid, const struct sb_session_verdict *v)
{
	if (v->closed)
		sb_buf_printf(b, "\n[session %s ended: %s. Its variables and files are gone; open a new one with "
				 "session_open.]", sid, v->reason);
	else if (v->restarted)
		sb_buf_printf(b, "\n[the session's state was lost: %s. Its variables, functions and imports are gone; "
				 "files in /work are kept. Define again what you need.]", v->reason);
	else if (v->interrupted)
		sb_buf_printf(b, "\n[the code was interrupted (KeyboardInterrupt) and stopped; the session kept its "
				 "state (variables from before the call are still there). For long computations use "
				 "job_start with this session_id.]");
	if (v->workspace[0] && v->kept_failed)
		sb_buf_printf(b, "\n[workspace %s: the last changes to /work were NOT saved on disk: %s. They are "
				 "sent again with the next call's]", v->workspace, v->kept);
	else if (v->workspace[0])
		sb_buf_printf(b, "\n[/work is workspace %s, kept on disk%s%s]", v->workspace, v->kept[0] ? ": " : "",
			      v->kept);
}

/* The session cannot take the call (unknown, expired, wrong language): a
 * tool error; its structuredContent keeps the run tools' schema (clients
 * check it, error or not): a result that never ran, with the error. */
void sb_run_refused(struct sb_tool_ctx *ctx, struct sb_tool_result *out, const struct sb_error *err)
{
	sb_tools_error(ctx, out, err);
	json_decref(out->structured);
	struct sb_result res;
	sb_result_init(&res);
	res.out.data = strdup("");
	res.err.data = strdup("");
	res.internal_error = strdup(err->msg);
	res.hint = err->hint[0] ? strdup(err->hint) : NULL;
	out->structured = sb_result_to_json(&res);
	sb_result_free(&res);
}

/* A run's result as the tool's: the audit record, the text (with what the
 * call did to its session, sid not NULL), the figures, the structured
 * result. The one place a run's result is shaped. */
void sb_run_result(const struct sb_tool *t, struct sb_tool_ctx *ctx, struct sb_tool_result *out, struct sb_result *res,
		   const char *sid, const struct sb_session_verdict *v)
{
	const struct sb_tool_server *srv = ctx->srv;
	if (!res->out.data)
		res->out.data = strdup("");
	if (!res->err.data)
		res->err.data = strdup("");
	out->cancelled = res->cancelled;
	struct sb_audit_record *rec = ctx->audit;
	sb_result_verdict(res, rec->verdict, sizeof rec->verdict);
	if (sid && (v->restarted || v->closed))
		snprintf(rec->verdict + strlen(rec->verdict), sizeof rec->verdict - strlen(rec->verdict), "%s",
			 v->closed ? "; session ended" : "; session restarted");
	sb_tool_backend_of(srv, res->sandbox, rec->backend, sizeof rec->backend);
	rec->duration_ms = res->duration_ms;
	rec->ok = sb_result_ok(res);
	SB_AUTO_BUF b = {0};
	char *text = sb_result_text(res, t, srv->cfg);
	sb_buf_printf(&b, "%s", text ? text : rec->verdict);
	free(text);
	if (sid)
		session_note(&b, sid, v);
	sb_tool_result_text(out, b.data ? b.data : "");
	sb_display_content(&res->display, &out->content);
	if (sid)
		sb_tool_result_links(out, sid, res);
	out->is_error = !rec->ok;
	out->structured = sb_result_to_json(res);
	if (sid)
		json_object_set_new(out->structured, "session",
				    json_pack("{s:s, s:b, s:b, s:b, s:s}", "session_id", sid, "interrupted",
					      v->interrupted, "restarted", v->restarted, "ended", v->closed, "reason",
					      v->reason));
	if (sid && v->workspace[0])
		json_object_set_new(json_object_get(out->structured, "session"), "named_workspace",
				    json_pack("{s:s, s:b, s:s}", "name", v->workspace, "saved", !v->kept_failed, "note",
					      v->kept));
}

void sb_run_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx, struct sb_tool_result *out)
{
	const struct sb_tool_server *srv = ctx->srv;
	const char *sid = sb_tool_arg_text(args, "session_id", NULL);
	struct sb_job job = {.kind = sid ? SB_JOB_SESSION : SB_JOB_STATELESS, .owner = ctx->owner, .session = sid,
			     .lang = t->lang, .limits = srv->cfg->limits};
	job.code = sb_tool_arg_text(args, "code", &job.code_len);
	job.limits.timeout_s = (unsigned)sb_tool_arg_int(args, "timeout_seconds", srv->cfg->limits.timeout_s);
	ctx->audit->timeout_s = job.limits.timeout_s;

	struct sb_run_out ro;
	if (!srv->runner) {
		/* No runner: a stateless result with the reason, session or not. */
		memset(&ro, 0, sizeof ro);
		sb_result_init(&ro.res);
		no_runner_result(srv, job.limits.timeout_s, &ro.res);
		sid = NULL;
	} else if (sb_runner_run(srv->runner, &job, &ctx->hooks, &ro)) {
		sb_run_refused(ctx, out, &ro.err);
		sb_run_out_free(&ro);
		return;
	}
	sb_run_result(t, ctx, out, &ro.res, sid, &ro.session);
	sb_run_out_free(&ro);
}
