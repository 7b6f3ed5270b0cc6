/* `sagebox status` and the sandbox_status tool as text: the verdict line,
 * then what is enforced, what is not and how to fix it, warnings, details.
 * The backend's rows come from status_backends.c; sagebox's own (time,
 * output, isolation, settings) are added here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/status_rows.h"

/* The user's package presets (`sagebox packages add`), when there are any. */
static void packages_row(struct sb_status_rows *r, const json_t *pk)
{
	const json_t *l = json_object_get(pk, "installed");
	const char *why = sb_report_str(pk, "why");
	if (!json_array_size(l) && !why)
		return;
	SB_AUTO_BUF names = {0};
	size_t i;
	const json_t *it;
	json_array_foreach(l, i, it)
		sb_buf_printf(&names, "%s%s %s", i ? ", " : "", sb_report_txt(it, "name"), sb_report_txt(it, "version"));
	if (json_is_true(json_object_get(pk, "bound")))
		sb_report_row(&r->details, "packages", "%s, bound read-only at %s (end of sys.path): %s",
			      sb_report_txt(pk, "dir"), sb_report_txt(pk, "mount"), names.len ? names.data : "");
	else
		sb_report_row(&r->warn, "packages", "%s is not bound into sandboxes: %s", sb_report_txt(pk, "dir"),
			      why ? why : "");
}

/* The user's project folder, and the caller's named workspaces (the tool's
 * status only: the CLI has no client). */
static void storage_rows(struct sb_status_rows *r, const json_t *st)
{
	const json_t *p = json_object_get(st, "project");
	if (json_is_true(json_object_get(p, "bound")))
		sb_report_row(&r->on, "project", "%s is bound READ-WRITE at %s in %s: the code can %s",
			      sb_report_txt(p, "dir"), sb_report_txt(p, "at"), sb_report_txt(p, "in"),
			      sb_report_txt(p, "code_can"));
	else if (sb_report_str(p, "dir"))
		sb_report_row(&r->warn, "project", "%s: %s", sb_report_txt(p, "dir"), sb_report_txt(p, "note"));
	else if (p)
		sb_report_row(&r->details, "project", "%s", sb_report_txt(p, "note"));
	const json_t *w = json_object_get(st, "workspaces");
	if (!w)
		return;
	SB_AUTO_BUF names = {0};
	size_t i;
	const json_t *it;
	json_array_foreach(json_object_get(w, "workspaces"), i, it)
		sb_buf_printf(&names, "%s%s %.1f MiB%s", i ? ", " : ": ", sb_report_txt(it, "name"),
			      (double)json_integer_value(json_object_get(it, "bytes")) / (1 << 20),
			      json_is_object(json_object_get(it, "held_by")) ? " (open)" : "");
	sb_report_row(&r->details, "workspaces", "%zu kept on disk, %.1f MiB of %.1f MiB (workspaces_total), at most "
						 "%.1f MiB each (workspace_size)%s",
		      json_array_size(json_object_get(w, "workspaces")),
		      (double)json_integer_value(json_object_get(w, "used_bytes")) / (1 << 20),
		      (double)json_integer_value(json_object_get(w, "workspaces_total_bytes")) / (1 << 20),
		      (double)json_integer_value(json_object_get(w, "workspace_size_bytes")) / (1 << 20),
		      names.len ? names.data : "");
}

/* The rows every backend shares: what sagebox itself enforces, and how it runs. */
static void runner_rows(struct sb_status_rows *r, const json_t *st, const json_t *s)
{
	long long timeout = json_integer_value(json_object_get(s, "timeout"));
	if (!json_object_get(json_object_get(json_object_get(st, "backend"), "enforced"), "limits"))
		sb_report_row(&r->on, "time", "%lld s per call unless the call asks otherwise, by sagebox "
					      "(it kills the whole sandbox)", timeout);
	sb_report_row(&r->on, "output", "%lld KiB kept per stream (head and tail); a flood stops the sandbox",
		      (long long)json_integer_value(json_object_get(s, "output_limit_kib")));

	const char *iso = sb_report_str(st, "isolation") ? sb_report_str(st, "isolation") : sb_report_str(s, "isolation");
	long long concurrent = json_integer_value(json_object_get(s, "max_concurrent"));
	if (iso && !strcmp(iso, "warm"))
		sb_report_row(&r->details, "isolation", "warm: each call is a fork of a worker with Sage or Python "
							 "loaded; %lld per language, replaced after %lld calls or "
							 "%lld min; at most %lld calls at once",
			      (long long)json_integer_value(json_object_get(s, "pool_size")),
			      (long long)json_integer_value(json_object_get(s, "worker_max_jobs")),
			      (long long)json_integer_value(json_object_get(s, "worker_max_minutes")), concurrent);
	else if (iso)
		sb_report_row(&r->details, "isolation", "fresh: a new sandbox for each call; at most %lld calls at once",
			      concurrent);
	const json_t *workers = json_object_get(json_object_get(st, "pool"), "workers");
	if (json_is_array(workers) && r->form == SB_REPORT_FULL) {
		if (!json_array_size(workers))
			sb_report_row(&r->details, "workers", "none yet (a call starts one)");
		size_t i;
		json_t *w;
		json_array_foreach(workers, i, w) {
			const char *state = sb_report_str(w, "state");
			sb_report_row(&r->details, "workers", "%s: %lld calls, %lld s old%s%s",
				      sb_report_str(w, "kind") ? sb_report_str(w, "kind") : "?",
				      (long long)json_integer_value(json_object_get(w, "jobs")),
				      (long long)json_integer_value(json_object_get(w, "age_s")), state ? ", " : "",
				      state ? state : "");
		}
	}
	const json_t *net = json_object_get(st, "network");
	const char *allow = sb_report_str(net, "allow");
	if (allow && !strcmp(allow, "none"))
		sb_report_row(&r->on, "network", "none: loopback only inside (setting: network)");
	else if (allow && json_is_true(json_object_get(net, "proxy_running")))
		sb_report_row(&r->on, "network", "only through sagebox's proxy (pid %lld, never root), to: %s; "
						 "every other host, and private or loopback addresses not listed as such, refused",
			      (long long)json_integer_value(json_object_get(net, "proxy_pid")), allow);
	else if (allow)
		sb_status_off(r, "network", "the proxy for %s is NOT running: no sandbox can reach a host", allow);
	const char *cfg = sb_report_str(s, "config_file"), *audit = sb_report_str(s, "audit_log");
	sb_report_row(&r->details, "settings", "timeout %lld s, memory %s, cpus %g, pids %lld; config file: %s; "
					       "audit log: %s", timeout, sb_report_txt(s, "memory"),
		      json_number_value(json_object_get(s, "cpus")), (long long)json_integer_value(json_object_get(s, "pids")),
		      cfg ? cfg : "none", audit && *audit ? audit : "off");
	packages_row(r, json_object_get(st, "packages"));
	storage_rows(r, st);
	const json_t *mcp = json_object_get(st, "mcp");
	if (mcp) {
		const char *client = sb_report_str(mcp, "client");
		sb_report_row(&r->details, "server", "sagebox %s, MCP protocol %s%s%s", sb_report_txt(mcp, "server_version"),
			      sb_report_txt(mcp, "protocol_version"), client && *client ? "; you are client " : "",
			      client && *client ? client : "");
	}
}

static void verdict(struct sb_buf *out, const json_t *st, const json_t *b, const struct sb_status_rows *r)
{
	const char *name = sb_report_str(b, "name") ? sb_report_str(b, "name") : sb_report_str(b, "backend");
	if (!name) /* no runner at all: the setting asked for */
		name = sb_report_str(json_object_get(st, "settings"), "backend");
	const char *iso = sb_report_str(st, "isolation");
	const char *err = sb_report_str(b, "error") ? sb_report_str(b, "error") : sb_report_str(st, "error");
	const char *hint = sb_report_str(b, "error") ? sb_report_str(b, "hint") : sb_report_str(st, "hint");
	if (!json_is_true(json_object_get(st, "ok"))) {
		sb_buf_printf(out, "sagebox: the sandbox does NOT work here (%s backend).\n", name ? name : "no");
		sb_report_row(out, "why", "%s", err ? err : "the backend is not available");
		if (hint && *hint)
			sb_report_row(out, "fix", "%s", hint);
		return;
	}
	if (!sb_status_has_cap(b, "isolated")) {
		sb_buf_printf(out, "sagebox: NO ISOLATION: the %s backend runs code on the host as your user, with "
				   "your files and network; use it only for code you would run yourself.\n",
			      name ? name : "?");
		return;
	}
	sb_buf_printf(out, "sagebox: the sandbox works here: %s backend, %s isolation", name ? name : "?",
		      iso ? iso : "?");
	if (r->n_off)
		sb_buf_printf(out, "; %zu thing%s not enforced (below)", r->n_off, r->n_off == 1 ? " is" : "s are");
	sb_buf_printf(out, ".\n");
}

char *sb_status_text(const json_t *st, enum sb_report_form form)
{
	struct sb_status_rows r = {.form = form};
	const json_t *b = json_object_get(st, "backend"), *s = json_object_get(st, "settings");
	sb_status_backend_rows(&r, st);
	bool ok = json_is_true(json_object_get(st, "ok"));
	size_t backend_rows = r.on.len;
	if (s)
		runner_rows(&r, st, s);
	if (!ok && !backend_rows)
		r.on.len = 0; /* nothing of the backend is known: sagebox's own rows alone would mislead */

	SB_AUTO_BUF out = {0};
	verdict(&out, st, b, &r);
	sb_report_section(&out, ok ? "Enforced:" : "Would be enforced:", &r.on);
	if (!r.n_off && ok)
		sb_buf_printf(&out, "\nNot enforced: nothing; everything above holds here.\n");
	sb_report_section(&out, "Not enforced:", &r.off);
	sb_report_section(&out, "Warnings:", &r.warn);
	sb_report_section(&out, "Details:", &r.details);
	if (form == SB_REPORT_FULL)
		sb_buf_printf(&out, "\nEvery field: sagebox status --json. A check from inside the sandbox: sagebox "
				    "self-test.\n");
	sb_buf_free(&r.on);
	sb_buf_free(&r.off);
	sb_buf_free(&r.warn);
	sb_buf_free(&r.details);
	if (out.len && out.data[out.len - 1] == '\n')
		out.data[--out.len] = '\0';
	return sb_buf_steal(&out, NULL);
}
