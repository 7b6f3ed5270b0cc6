/* The status and self-test texts (tools/status_text.c, self_test_text.c), from reports in the
 * shapes the backends produce (the native report of this machine is
 * checked live by tests/cli and tests/sandbox; podman's by tests/podman).
 * Each case asserts the verdict line and the facts that must be there. */
#include <stdlib.h>

#include "check.h"
#include "tools/report_text.h"

static const char *settings =
	"{\"backend\":\"auto\",\"isolation\":\"warm\",\"timeout\":30,\"memory\":\"256m\",\"cpus\":1.0,\"pids\":96,"
	"\"output_limit_kib\":256,\"pool_size\":1,\"worker_max_jobs\":1000,\"worker_max_minutes\":60,"
	"\"max_concurrent\":4,\"audit_log\":\"\",\"config_file\":null}";

static json_t *status_of(const char *backend, bool ok)
{
	json_error_t e;
	json_t *st = json_pack("{s:b, s:s}", "ok", ok, "isolation", "warm");
	json_object_set_new(st, "settings", json_loads(settings, 0, &e));
	if (backend)
		json_object_set_new(st, "backend", json_loads(backend, 0, &e));
	return st;
}

static char *text_of(json_t *st, enum sb_report_form form)
{
	char *t = sb_status_text(st, form);
	json_decref(st);
	CHECK(t != NULL);
	return t ? t : strdup("");
}

static bool first_line_is(const char *text, const char *line)
{
	size_t n = strlen(line);
	bool ok = !strncmp(text, line, n) && text[n] == '\n';
	if (!ok)
		fprintf(stderr, "first line: %.*s\nwanted:     %s\n", (int)strcspn(text, "\n"), text, line);
	return ok;
}

/* The text between a section's title and the next blank line. */
static char *section(const char *text, const char *title)
{
	const char *p = strstr(text, title);
	if (!p)
		return strdup("");
	const char *end = strstr(p, "\n\n");
	return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

static void test_native_root_cgroup(void)
{
	char *t = text_of(status_of("{\"name\":\"native\",\"started_as_root\":true,\"sandbox_user\":{\"name\":\"nobody\","
				    "\"host_uid\":65534},\"user_namespaces\":{\"available\":true},\"landlock\":{\"abi\":7,"
				    "\"available\":true,\"covers\":\"filesystem, TCP bind/connect\"},\"seccomp\":{\"available\":"
				    "true},\"cgroup\":{\"mode\":\"v2\"},\"would_enforce\":{\"memory\":\"cgroup v2\",\"pids\":"
				    "\"cgroup v2\",\"cpus\":\"cgroup v2\",\"nofile_fsize_core\":\"rlimit\"},\"sage\":{\"path\":"
				    "\"/usr/bin/sage\",\"present\":true},\"available\":true,\"capabilities\":[\"isolated\","
				    "\"own_pid_namespace\",\"syscall_policy\"]}", true),
			  SB_REPORT_FULL);
	CHECK(first_line_is(t, "sagebox: the sandbox works here: native backend, warm isolation."));
	char *on = section(t, "\nEnforced:");
	CHECK_STR_CONTAINS(on, "code runs as nobody (host uid 65534)");
	CHECK_STR_CONTAINS(on, "seccomp filter (sagebox's syscall policy)");
	CHECK_STR_CONTAINS(on, "ABI 7: filesystem, TCP bind/connect");
	CHECK_STR_CONTAINS(on, "256m for the whole sandbox, by cgroup v2");
	CHECK_STR_CONTAINS(on, "1 CPU, by cgroup v2");
	CHECK_STR_CONTAINS(on, "30 s per call");
	CHECK_STR_CONTAINS(t, "\nNot enforced: nothing");
	CHECK_STR_CONTAINS(t, "sage          /usr/bin/sage");
	CHECK_STR_CONTAINS(t, "sagebox status --json");
	free(on);
	free(t);
}

static void test_native_no_cgroup(void)
{
	char *t = text_of(status_of("{\"name\":\"native\",\"user_namespaces\":{\"available\":true},\"landlock\":{\"abi\":0,"
				    "\"available\":false,\"covers\":\"nothing (no Landlock in this kernel)\"},\"seccomp\":"
				    "{\"available\":true},\"cgroup\":{\"mode\":\"none\",\"why_none\":\"cgroup v1 needs root\"},"
				    "\"would_enforce\":{\"memory\":\"rlimit DATA (per process)\",\"pids\":\"rlimit NPROC\","
				    "\"cpus\":null,\"nofile_fsize_core\":\"rlimit\"},\"python\":{\"path\":\"/nope/python3\","
				    "\"present\":false},\"available\":true,\"capabilities\":[\"isolated\"]}", true),
			  SB_REPORT_BRIEF);
	CHECK(first_line_is(t, "sagebox: the sandbox works here: native backend, warm isolation; 4 things are not "
			       "enforced (below)."));
	char *on = section(t, "\nEnforced:"), *off = section(t, "\nNot enforced:");
	CHECK_STR_CONTAINS(on, "256m per process, by rlimit DATA");
	CHECK_STR_CONTAINS(on, "code runs under your uid");
	CHECK(!strstr(on, "cpus") && !strstr(on, "Landlock"));
	CHECK_STR_CONTAINS(off, "memory total  no bound for the sandbox as a whole (no usable cgroup: cgroup v1 needs root)");
	CHECK_STR_CONTAINS(off, "fix: on a machine with systemd and cgroup v2, start sagebox from your login");
	CHECK_STR_CONTAINS(off, "or start it as root");
	CHECK_STR_CONTAINS(off, "cpus          1 CPU asked, not limited");
	CHECK_STR_CONTAINS(off, "Landlock      nothing (no Landlock in this kernel)");
	CHECK_STR_CONTAINS(off, "/nope/python3 is not there: python jobs cannot run");
	CHECK(!strstr(t, "sagebox status --json")); /* the brief form ends with the details */
	free(on);
	free(off);
	free(t);
}

/* A delegated cgroup v2 without the cpu controller (a user manager that
 * delegates only memory and pids): memory and processes held as a whole,
 * the CPU share said not to be, with why and the fix for that alone. */
static void test_native_v2_without_cpu(void)
{
	char *t = text_of(status_of("{\"name\":\"native\",\"user_namespaces\":{\"available\":true},\"landlock\":{\"abi\":4,"
				    "\"available\":true,\"covers\":\"filesystem, TCP bind/connect\"},\"seccomp\":"
				    "{\"available\":true},\"cgroup\":{\"mode\":\"v2\",\"dir\":\"/sys/fs/cgroup/x.scope\","
				    "\"delegated\":\"x.scope, a scope of your systemd user manager with Delegate=yes\","
				    "\"note\":\"the cpu controller is not delegated to /sys/fs/cgroup/x.scope (it has: memory pids)\"},"
				    "\"would_enforce\":{\"memory\":\"cgroup v2\",\"pids\":\"cgroup v2\","
				    "\"cpus\":null,\"nofile_fsize_core\":\"rlimit\"},"
				    "\"available\":true,\"capabilities\":[\"isolated\"]}", true),
			  SB_REPORT_FULL);
	char *on = section(t, "\nEnforced:"), *off = section(t, "\nNot enforced:");
	CHECK_STR_CONTAINS(on, "256m for the whole sandbox, by cgroup v2");
	CHECK_STR_CONTAINS(on, "processes     96, by cgroup v2");
	CHECK_STR_CONTAINS(off, "not limited: the cpu controller is not delegated to\n");
	CHECK_STR_CONTAINS(off, "Delegate=pids memory cpu");
	CHECK(!strstr(off, "memory total"));
	CHECK_STR_CONTAINS(t, "/sys/fs/cgroup/x.scope: x.scope, a scope of your systemd user manager with");
	free(on);
	free(off);
	free(t);
}

static void test_unavailable(void)
{
	char *t = text_of(status_of("{\"name\":\"docker\",\"available\":false,\"error\":\"cannot run "
				    "/nonexistent/docker: No such file or directory\",\"hint\":\"install docker\"}", false),
			  SB_REPORT_BRIEF);
	CHECK(first_line_is(t, "sagebox: the sandbox does NOT work here (docker backend)."));
	CHECK_STR_CONTAINS(t, "\n  why           cannot run /nonexistent/docker: No such file or directory\n");
	CHECK_STR_CONTAINS(t, "\n  fix           install docker\n");
	CHECK(!strstr(t, "\nEnforced:") && !strstr(t, "Not enforced: nothing"));
	free(t);

	/* No runner at all (the MCP server could not create one). */
	json_t *st = status_of(NULL, false);
	json_object_set_new(st, "error", json_string("out of memory"));
	t = text_of(st, SB_REPORT_BRIEF);
	CHECK(first_line_is(t, "sagebox: the sandbox does NOT work here (auto backend)."));
	CHECK_STR_CONTAINS(t, "why           out of memory");
	free(t);
}

static void test_podman(void)
{
	char *t = text_of(status_of(
		"{\"backend\":\"podman\",\"available\":true,\"engine\":{\"name\":\"podman\",\"version\":\"4.3.1\","
		"\"rootless\":true,\"oci_runtime\":\"runc\",\"storage_driver\":\"overlay\",\"cgroup_version\":1,"
		"\"cgroup_manager\":\"cgroupfs\"},\"enforced\":{\"image\":{\"name\":\"localhost/s:1\",\"present\":true,"
		"\"id\":\"4e2495fa48a3cf86\",\"size_bytes\":3480677132,\"pinned\":false,\"pin_hint\":\"pin it: image = "
		"localhost/s@sha256:af6e\"},\"user\":\"sage\",\"rootless\":true,\"network\":\"none\",\"root_filesystem\":"
		"\"read-only\",\"writable\":[\"/tmp (tmpfs)\"],\"host_mounts\":\"none\",\"capabilities\":\"none\","
		"\"no_new_privileges\":true,\"seccomp\":\"sagebox's profile\",\"limits\":{\"memory\":{\"value\":\"256m\","
		"\"enforced\":true,\"enforced_by\":\"RLIMIT_DATA per process\",\"note\":\"not the total\"},\"cpus\":"
		"{\"value\":1.0,\"enforced\":false,\"note\":\"not enforced: no cpu controller\"},\"timeout_s\":{\"value\":"
		"30,\"enforced\":true,\"enforced_by\":\"sagebox (kill + rm -f)\"}},\"host_details\":{\"hidden\":[\"/sys\"],"
		"\"visible\":[\"/proc/self/mountinfo: layer paths\"]},\"warnings\":[\"the image is a tag, not a pinned "
		"digest\"]},\"capabilities\":[\"isolated\",\"own_pid_namespace\",\"syscall_policy\",\"container_images\"]}",
				    true),
			  SB_REPORT_FULL);
	CHECK(first_line_is(t, "sagebox: the sandbox works here: podman backend, warm isolation; 2 things are not "
			       "enforced (below)."));
	char *on = section(t, "\nEnforced:"), *off = section(t, "\nNot enforced:");
	CHECK_STR_CONTAINS(on, "code runs as sage in a rootless container");
	CHECK_STR_CONTAINS(on, "network       none");
	CHECK_STR_CONTAINS(on, "256m, by RLIMIT_DATA per process");
	CHECK_STR_CONTAINS(on, "note: not the total");
	CHECK_STR_CONTAINS(on, "time          30 s, by sagebox (kill + rm -f)");
	CHECK_STR_CONTAINS(on, "hidden: /sys");
	CHECK_STR_CONTAINS(off, "cpus          1 CPU asked, not enforced: no cpu controller");
	CHECK_STR_CONTAINS(off, "the code can see /proc/self/mountinfo: layer paths");
	CHECK_STR_CONTAINS(t, "\nWarnings:\n  warning       the image is a tag, not a pinned digest\n");
	CHECK_STR_CONTAINS(t, "fix: pin it: image = localhost/s@sha256:af6e");
	CHECK_STR_CONTAINS(t, "podman 4.3.1, rootless, runc");
	CHECK_STR_CONTAINS(t, "localhost/s:1 (id 4e2495fa48a3, 3319 MiB)");
	free(on);
	free(off);
	free(t);
}

static void test_host(void)
{
	char *t = text_of(status_of("{\"name\":\"host\",\"available\":true,\"enforced\":{\"isolation\":\"none\",\"warning\":"
				    "\"the code runs on the host as your user\",\"memory\":{\"limit\":\"256m\",\"enforced_by\":"
				    "\"rlimit DATA\"},\"pids\":{\"limit\":96,\"enforced_by\":null,\"note\":\"not enforced: root "
				    "is exempt\"},\"nofile\":1024},\"capabilities\":[]}", true),
			  SB_REPORT_BRIEF);
	CHECK(first_line_is(t, "sagebox: NO ISOLATION: the host backend runs code on the host as your user, with your "
			       "files and network; use it only for code you would run yourself."));
	CHECK_STR_CONTAINS(t, "isolation     none: the code runs on the host as your user");
	CHECK_STR_CONTAINS(t, "processes     96 asked, not enforced: root is exempt");
	CHECK_STR_CONTAINS(t, "memory        256m, by rlimit DATA");
	CHECK_STR_CONTAINS(t, "open files    1024");
	free(t);
}

static void test_self_test(void)
{
	json_error_t e;
	json_t *st = json_loads("{\"ok\":true,\"backend\":\"native\",\"factor\":{\"stdout\":\"(x - 1) * (x + 1) * (x^2 + 1)\\n\"},"
				"\"checks\":[{\"name\":\"sage factor(x^4 - 1)\",\"ok\":true,\"detail\":\"printed\"},{\"name\":"
				"\"no network\",\"ok\":true,\"detail\":\"reached nothing\"},{\"name\":\"landlock\",\"ok\":null,"
				"\"detail\":\"not this backend's\"}]}", 0, &e);
	char *t = sb_self_test_text(st, SB_REPORT_BRIEF);
	CHECK(first_line_is(t, "sagebox self-test: passed (native backend): Sage printed (x - 1) * (x + 1) * (x^2 + 1), "
			       "and 1 check of the sandbox made from inside it holds."));
	CHECK_STR_CONTAINS(t, "\nPassed:\n  ok    sage factor(x^4 - 1): printed\n  ok    no network: reached nothing\n");
	CHECK_STR_CONTAINS(t, "\n  n/a   landlock: not this backend's");
	CHECK(!strstr(t, "Failed:"));
	free(t);

	json_object_set_new(st, "ok", json_false());
	json_object_set_new(json_array_get(json_object_get(st, "checks"), 1), "ok", json_false());
	t = sb_self_test_text(st, SB_REPORT_BRIEF);
	CHECK(first_line_is(t, "sagebox self-test: FAILED (native backend): 1 of 2 checks failed: no network."));
	CHECK_STR_CONTAINS(t, "\nFailed:\n  FAIL  no network: reached nothing\n");
	CHECK_STR_CONTAINS(t, "Call sandbox_status");
	free(t);
	json_decref(st);

	st = json_loads("{\"ok\":false,\"backend\":\"podman\",\"error\":\"refusing to run\",\"hint\":\"run as a normal "
			"user\",\"checks\":[]}", 0, &e);
	t = sb_self_test_text(st, SB_REPORT_FULL);
	CHECK(first_line_is(t, "sagebox self-test: FAILED (podman backend): the sandbox could not run code."));
	CHECK_STR_CONTAINS(t, "\n  why           refusing to run\n  fix           run as a normal user\n");
	free(t);
	json_decref(st);
}

/* Per-user kernel resources (sandbox.c's per_user_resources): the caps
 * are listed as enforced; one whose sum over the sandboxes at once leaves
 * the host user too little is not enforced for the user's own processes. */
static void test_per_user(void)
{
	const char *b = "{\"name\":\"native\",\"started_as_root\":true,\"sandbox_user\":{\"name\":\"nobody\","
			"\"host_uid\":65534},\"would_enforce\":{},\"available\":true,\"capabilities\":[\"isolated\"],"
			"\"per_user_resources\":{\"sigpending\":{\"per_sandbox\":128,\"host_user_limit\":1000,"
			"\"taken_by_sandboxes_at_most\":1664,\"enough_left\":false},\"memlock\":{\"per_sandbox\":65536,"
			"\"enough_left\":true},\"max_inotify_instances\":{\"per_sandbox\":0},\"sandboxes_at_once\":13}}";
	char *t = text_of(status_of(b, true), SB_REPORT_FULL);
	char *on = section(t, "Enforced:"), *off = section(t, "Not enforced:");
	CHECK_STR_CONTAINS(on, "capped per sandbox: sigpending 128, memlock 64\n                KiB; 1 more at 0");
	CHECK_STR_CONTAINS(off, "sigpending: 13 sandboxes at once may hold 1664 of this user's limit of 1000");
	CHECK_STR_CONTAINS(off, "fix: lower max_concurrent");
	CHECK_STR_CONTAINS(t, "2 things are not enforced"); /* and cpus: no cgroup in this report */
	free(on);
	free(off);
	free(t);
}

int main(void)
{
	test_native_root_cgroup();
	test_native_no_cgroup();
	test_native_v2_without_cpu();
	test_unavailable();
	test_podman();
	test_host();
	test_self_test();
	test_per_user();
	return check_summary();
}
