/* What each backend's status report says is enforced and what is not, as
 * rows of the status text. Each backend reports in its own shape
 * (sandbox/native/status.c, sandbox/podman/status.c, sandbox/host.c); this
 * file reads those shapes and claims nothing a report does not say. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/status_rows.h"
#include "util/buf.h"
#include "util/utf8.h"

/* What to do when no usable cgroup exists for the native backend (its
 * probe, native/cgroup.c, accepts cgroup v1 as root or a delegated v2). */
#define CGROUP_FIX                                                                                      \
	"on a machine with systemd and cgroup v2, start sagebox from your login session, where it asks "   \
	"your systemd user manager for a delegated scope (it needs the session bus: XDG_RUNTIME_DIR or "  \
	"DBUS_SESSION_BUS_ADDRESS set, and dbus-user-session installed); or start it as root (it still "   \
	"runs the code as sandbox_user), or from a delegated cgroup v2 with the memory, pids and cpu "     \
	"controllers (systemd-run --user --scope -p Delegate=yes sagebox ...)"
/* A delegated cgroup without the cpu controller: systemd's user@.service
 * delegates to the user's manager only the controllers its Delegate= names. */
#define CPU_FIX                                                                                         \
	"let the user's systemd manager delegate the cpu controller: as root, `systemctl edit "          \
	"user@.service` with [Service] Delegate=pids memory cpu, then log in again"

void sb_status_off(struct sb_status_rows *r, const char *label, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_report_vrow(&r->off, label, fmt, ap);
	va_end(ap);
	r->n_off++;
}

bool sb_status_has_cap(const json_t *backend, const char *cap)
{
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(backend, "capabilities"), i, c) {
		if (json_is_string(c) && !strcmp(json_string_value(c), cap))
			return true;
	}
	return false;
}

/* A JSON scalar as text, with its unit. */
enum unit { U_PLAIN, U_BYTES, U_SECONDS, U_CORES };

static void value_text(const json_t *v, enum unit u, char *buf, size_t n)
{
	if (json_is_string(v))
		snprintf(buf, n, "%s", json_string_value(v));
	else if (json_is_integer(v) && u == U_BYTES)
		snprintf(buf, n, "%lld MiB", (long long)(json_integer_value(v) >> 20));
	else if (json_is_integer(v))
		snprintf(buf, n, "%lld%s", (long long)json_integer_value(v), u == U_SECONDS ? " s" : "");
	else if (json_is_number(v))
		snprintf(buf, n, "%g%s", json_number_value(v), u == U_CORES ? " CPU" : "");
	else
		snprintf(buf, n, "?");
}

/* The limits a backend reports as {value or limit, enforced, enforced_by, note}. */
static const struct {
	const char *key, *label;
	enum unit unit;
} limit_rows[] = {
	{"memory", "memory", U_PLAIN},    {"pids", "processes", U_PLAIN},   {"cpus", "cpus", U_CORES},
	{"nofile", "open files", U_PLAIN}, {"fsize", "file size", U_BYTES}, {"fsize_bytes", "file size", U_BYTES},
	{"tmpfs", "tmpfs", U_BYTES},      {"timeout_s", "time", U_SECONDS},
};

static void limit_row(struct sb_status_rows *r, const char *key, const json_t *lim)
{
	const char *label = key;
	enum unit unit = U_PLAIN;
	for (size_t i = 0; i < sizeof limit_rows / sizeof *limit_rows; i++)
		if (!strcmp(limit_rows[i].key, key)) {
			label = limit_rows[i].label;
			unit = limit_rows[i].unit;
		}
	char v[64];
	if (!json_is_object(lim)) {
		/* A bare value: applied as it is (host: nofile, fsize_bytes). */
		value_text(lim, unit, v, sizeof v);
		sb_report_row(&r->on, label, "%s", v);
		return;
	}
	json_t *val = json_object_get(lim, "value");
	value_text(val ? val : json_object_get(lim, "limit"), unit, v, sizeof v);
	const char *by = sb_report_str(lim, "enforced_by"), *note = sb_report_str(lim, "note");
	json_t *enforced = json_object_get(lim, "enforced");
	if (json_is_boolean(enforced) ? json_is_true(enforced) : by != NULL) {
		sb_report_row(&r->on, label, "%s, by %s", v, by ? by : "the backend");
		if (r->form == SB_REPORT_FULL)
			sb_report_sub(&r->on, "note", note);
	} else {
		sb_status_off(r, label, "%s asked, %s", v, note ? note : "not enforced");
	}
}

static void limits_of(struct sb_status_rows *r, const json_t *limits)
{
	const char *key;
	json_t *lim;
	json_object_foreach((json_t *)limits, key, lim) {
		limit_row(r, key, lim);
	}
}

static void native(struct sb_status_rows *r, const json_t *b, const json_t *settings)
{
	const json_t *user = json_object_get(b, "sandbox_user");
	if (json_is_true(json_object_get(b, "started_as_root")))
		sb_report_row(&r->on, "identity", "code runs as %s (host uid %lld), never as root",
			      sb_report_str(user, "name") ? sb_report_str(user, "name") : "?",
			      (long long)json_integer_value(json_object_get(user, "host_uid")));
	else
		sb_report_row(&r->on, "identity", "code runs under your uid, as an unprivileged user inside "
						  "(started as root, sagebox would give it a user of its own)");
	const json_t *un = json_object_get(b, "user_namespaces");
	if (json_is_true(json_object_get(un, "available"))) {
		sb_report_row(&r->on, "namespaces", "user namespaces work here%s",
			      sb_status_has_cap(b, "own_pid_namespace") ? "; the code has its own pid namespace" : "");
	} else if (un) {
		sb_status_off(r, "namespaces", "%s",
			      sb_report_str(un, "error") ? sb_report_str(un, "error") : "user namespaces are refused here");
		sb_report_sub(&r->off, "fix", sb_report_str(un, "hint"));
	}
	const json_t *sc = json_object_get(b, "seccomp");
	if (json_is_true(json_object_get(sc, "available"))) {
		sb_report_row(&r->on, "syscalls", "seccomp filter%s",
			      sb_status_has_cap(b, "syscall_policy") ? " (sagebox's syscall policy)" : "");
	} else if (sc) {
		sb_status_off(r, "syscalls", "no seccomp filter: %s",
			      sb_report_str(sc, "error") ? sb_report_str(sc, "error") : "unavailable");
		sb_report_sub(&r->off, "fix", "a kernel built with CONFIG_SECCOMP_FILTER");
	}
	const json_t *ll = json_object_get(b, "landlock");
	if (json_is_true(json_object_get(ll, "available"))) {
		sb_report_row(&r->on, "Landlock", "ABI %lld: %s", (long long)json_integer_value(json_object_get(ll, "abi")),
			      sb_report_str(ll, "covers") ? sb_report_str(ll, "covers") : "?");
	} else if (ll) {
		sb_status_off(r, "Landlock", "%s",
			      sb_report_str(ll, "covers") ? sb_report_str(ll, "covers") : "not in this kernel");
		sb_report_sub(&r->off, "fix", "a kernel with Landlock (Linux 5.13 or later, \"landlock\" in its lsm= list)");
	}

	const json_t *we = json_object_get(b, "would_enforce");
	const json_t *cgj = json_object_get(b, "cgroup");
	const char *why = sb_report_str(cgj, "why_none");
	if (sb_report_str(cgj, "delegated"))
		sb_report_row(&r->details, "cgroup", "%s: %s", sb_report_str(cgj, "dir") ? sb_report_str(cgj, "dir") : "?",
			      sb_report_str(cgj, "delegated"));
	const char *mem = sb_report_str(we, "memory"), *pids = sb_report_str(we, "pids"), *cpus = sb_report_str(we, "cpus");
	const char *files = sb_report_str(we, "nofile_fsize_core");
	char v[64];
	if (mem && !strncmp(mem, "cgroup", 6)) {
		sb_report_row(&r->on, "memory", "%s for the whole sandbox, by %s", sb_report_txt(settings, "memory"), mem);
	} else if (mem) {
		sb_report_row(&r->on, "memory", "%s per process, by %s", sb_report_txt(settings, "memory"), mem);
		sb_status_off(r, "memory total", "no bound for the sandbox as a whole (no usable cgroup: %s)",
			      why ? why : "?");
		sb_report_sub(&r->off, "fix", CGROUP_FIX);
	}
	if (pids) {
		value_text(json_object_get(settings, "pids"), U_PLAIN, v, sizeof v);
		sb_report_row(&r->on, "processes", "%s, by %s", v, pids);
	}
	value_text(json_object_get(settings, "cpus"), U_CORES, v, sizeof v);
	const json_t *per_job = json_object_get(we, "cpus_per_job");
	if (cpus && json_is_number(per_job)) {
		sb_report_row(&r->on, "cpus", "%s per job, by %s (the warm worker's own work: %g core more; "
					      "a session: for the whole sandbox)",
			      v, cpus, json_number_value(per_job));
	} else if (cpus) {
		sb_report_row(&r->on, "cpus", "%s, by %s", v, cpus);
	} else if (we) {
		const char *note = sb_report_str(cgj, "note");
		sb_status_off(r, "cpus", "%s asked, not limited: %s; only the timeout bounds CPU use", v,
			      note ? note : "no cgroup cpu controller");
		sb_report_sub(&r->off, "fix", why ? "as for memory total" : note ? CPU_FIX : CGROUP_FIX);
	}
	if (files)
		sb_report_row(&r->on, "files", "open files, file size and core dumps, by %s", files);

	static const char *const commands[] = {"sage", "python", "shell"};
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
		const json_t *c = json_object_get(b, commands[i]);
		const char *path = sb_report_str(c, "path");
		if (!c || !path || json_is_true(json_object_get(c, "found"))) /* sage_python()'s row */
			continue;
		if (json_is_true(json_object_get(c, "present"))) {
			sb_report_row(&r->details, commands[i], "%s", path);
		} else {
			sb_status_off(r, commands[i], "%s is not there: %s jobs cannot run", path, commands[i]);
			char fix[160];
			snprintf(fix, sizeof fix, "install it (Debian: apt install %s), or set --%s to where it is",
				 i == 0 ? "sagemath" : i == 1 ? "python3" : "bash", commands[i]);
			sb_report_sub(&r->off, "fix", fix);
		}
	}
}

static void joined(const json_t *list, char *buf, size_t n)
{
	size_t i, used = 0;
	json_t *s;
	buf[0] = '\0';
	json_array_foreach(list, i, s) {
		if (json_is_string(s) && used < n)
			used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? "; " : "", json_string_value(s));
	}
}

static void container(struct sb_status_rows *r, const json_t *b)
{
	const json_t *e = json_object_get(b, "enforced"), *eng = json_object_get(b, "engine");
	const json_t *img = json_object_get(e, "image");
	char list[1024];
	if (eng)
		sb_report_row(&r->details, "engine", "%s %s, %s, %s, %s storage, cgroup v%lld (%s)",
			      sb_report_txt(eng, "name"), sb_report_txt(eng, "version"),
			      json_is_true(json_object_get(eng, "rootless")) ? "rootless" : "NOT rootless",
			      sb_report_txt(eng, "oci_runtime"), sb_report_txt(eng, "storage_driver"),
			      (long long)json_integer_value(json_object_get(eng, "cgroup_version")),
			      sb_report_txt(eng, "cgroup_manager"));
	if (!e)
		return;
	sb_report_row(&r->on, "identity", "code runs as %s in a %s container", sb_report_txt(e, "user"),
		      json_is_true(json_object_get(e, "rootless")) ? "rootless" : "root-run");
	sb_report_row(&r->on, "network", "%s", sb_report_txt(e, "network"));
	joined(json_object_get(e, "writable"), list, sizeof list);
	sb_report_row(&r->on, "filesystem", "%s image; writable: %s; host mounts: %s",
		      sb_report_txt(e, "root_filesystem"), list, sb_report_txt(e, "host_mounts"));
	sb_report_row(&r->on, "privileges", "capabilities: %s; no_new_privileges: %s", sb_report_txt(e, "capabilities"),
		      json_is_true(json_object_get(e, "no_new_privileges")) ? "yes" : "no");
	sb_report_row(&r->on, "syscalls", "%s", sb_report_txt(e, "seccomp"));
	limits_of(r, json_object_get(e, "limits"));
	const json_t *hd = json_object_get(e, "host_details");
	joined(json_object_get(hd, "visible"), list, sizeof list);
	if (list[0])
		sb_status_off(r, "host details", "the code can see %s", list);
	joined(json_object_get(hd, "hidden"), list, sizeof list);
	if (list[0])
		sb_report_row(&r->on, "host details", "hidden: %s", list);

	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(e, "warnings"), i, w) {
		if (json_is_string(w))
			sb_report_row(&r->warn, "warning", "%s", json_string_value(w));
	}
	if (json_is_true(json_object_get(img, "present"))) {
		const char *id = sb_report_txt(img, "id");
		sb_report_row(&r->details, "image", "%s (id %.*s, %lld MiB)", sb_report_txt(img, "name"),
			      (int)sb_utf8_prefix(id, strlen(id), 12), id,
			      (long long)(json_integer_value(json_object_get(img, "size_bytes")) >> 20));
		sb_report_sub(&r->warn, "fix", sb_report_str(img, "pin_hint"));
	} else if (img) {
		sb_status_off(r, "image", "%s is not here (sagebox never pulls)", sb_report_txt(img, "name"));
		char fix[1024];
		snprintf(fix, sizeof fix, "%s, or build one: %s", sb_report_txt(img, "pull_command"),
			 sb_report_txt(img, "build_command"));
		sb_report_sub(&r->off, "fix", fix);
	}
}

static void host(struct sb_status_rows *r, const json_t *b)
{
	const json_t *e = json_object_get(b, "enforced");
	sb_status_off(r, "isolation", "none: %s",
		      sb_report_str(e, "warning") ? sb_report_str(e, "warning") : "the code runs on the host");
	sb_report_sub(&r->off, "fix", "use an isolating backend: --backend native (or auto), or --backend podman");
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)e, key, v) {
		if (json_is_object(v) || json_is_integer(v))
			limit_row(r, key, v);
	}
}

/* What one sandbox may hold of what the kernel counts per host user
 * (sandbox.c adds it to every isolating backend's report): the non-zero
 * caps named, the zero ones counted; a cap whose sum over the sandboxes
 * that may run at once leaves the host user too little is not enforced
 * for the user's own processes. */
static void per_user(struct sb_status_rows *r, const json_t *b)
{
	const json_t *ur = json_object_get(b, "per_user_resources");
	if (!json_is_object(ur))
		return;
	SB_AUTO_BUF some = {0};
	size_t zero = 0;
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)ur, key, v) {
		const json_t *ps = json_object_get(v, "per_sandbox");
		if (!json_is_integer(ps))
			continue;
		long long n = (long long)json_integer_value(ps);
		bool bytes = !strcmp(key, "memlock") || !strcmp(key, "msgqueue");
		if (n == 0)
			zero++;
		else
			sb_buf_printf(&some, "%s%s %lld%s", some.len ? ", " : "", key, bytes ? n >> 10 : n, bytes ? " KiB" : "");
		if (json_is_false(json_object_get(v, "enough_left"))) {
			sb_status_off(r, "per-user", "%s: %lld sandboxes at once may hold %lld of this user's limit of %lld",
				      key, (long long)json_integer_value(json_object_get(ur, "sandboxes_at_once")),
				      (long long)json_integer_value(json_object_get(v, "taken_by_sandboxes_at_most")),
				      (long long)json_integer_value(json_object_get(v, "host_user_limit")));
			sb_report_sub(&r->off, "fix", "lower max_concurrent, or raise this user's limit (ulimit, limits.conf)");
		}
	}
	if (some.len || zero)
		sb_report_row(&r->on, "per-user", "what the kernel counts per host user, capped per sandbox: %s%s%zu more at 0 "
						  "(inotify, fanotify, namespaces, ...)",
			      some.len ? some.data : "", some.len ? "; " : "", zero);
}

/* Sage's Python (runner/sage/locate.c): which, Sage's version, how it was
 * found, and what native binds to make it visible. */
static void sage_python(struct sb_status_rows *r, const json_t *sp)
{
	if (!sp)
		return;
	if (sb_report_str(sp, "error")) {
		sb_status_off(r, "python", "%s", sb_report_str(sp, "error"));
		sb_report_sub(&r->off, "fix", sb_report_txt(sp, "hint"));
		return;
	}
	const char *v = sb_report_str(sp, "sage_version"), *cache = sb_report_str(sp, "cache");
	sb_report_row(&r->details, "python", "%s, %s%s; %s%s%s", sb_report_txt(sp, "python"), v ? "Sage " : "",
		      v ? v : "imports no Sage (run_sagemath will fail)", sb_report_txt(sp, "how"),
		      cache ? "; remembered in " : "", cache ? cache : "");
	size_t i;
	const json_t *b;
	json_array_foreach(json_object_get(sp, "binds"), i, b) {
		const char *how = sb_report_str(b, "bind");
		if (how && !strcmp(how, "bound"))
			sb_report_row(&r->details, "installation", "%s, bound read-only at the same path",
				      sb_report_txt(b, "path"));
		else if (how && !strcmp(how, "refused"))
			sb_report_row(&r->details, "installation", "%s not bound: %s", sb_report_txt(b, "path"),
				      sb_report_txt(b, "why"));
	}
	const json_t *path = json_object_get(sp, "path");
	if (json_array_size(path))
		sb_report_row(&r->details, "PATH", "%s%s%s first (shell jobs and !cmd run that sage and python3)",
			      json_string_value(json_array_get(path, 0)), json_array_size(path) > 1 ? ":" : "",
			      json_array_size(path) > 1 ? json_string_value(json_array_get(path, 1)) : "");
}

void sb_status_backend_rows(struct sb_status_rows *r, const json_t *st)
{
	sage_python(r, json_object_get(st, "sage_python"));
	const json_t *b = json_object_get(st, "backend"), *s = json_object_get(st, "settings");
	if (json_object_get(b, "would_enforce"))
		native(r, b, s);
	else if (json_object_get(json_object_get(b, "enforced"), "limits") || json_object_get(b, "engine"))
		container(r, b);
	else if (json_object_get(b, "enforced"))
		host(r, b);
	per_user(r, b);
}
