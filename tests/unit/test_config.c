#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "config/config.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

int main(void)
{
	struct sb_config cfg;
	struct sb_error err = {0};
	char *noenv[] = {NULL};

	sb_config_defaults(&cfg);
	CHECK(cfg.limits.timeout_s == 30);
	CHECK(!strcmp(cfg.limits.memory, "256m"));
	CHECK(cfg.limits.pids == 96);
	CHECK(cfg.limits.output_bytes == 256 * 1024);

	/* Ranges are enforced with errors, never clamped. */
	CHECK(sb_config_set(&cfg, "timeout", "600", "--timeout", &err) == 0 && cfg.limits.timeout_s == 600);
	/* instance: a router-safe name, or empty for the host name's. */
	CHECK(sb_instance_name_ok(sb_config_instance(&cfg)));
	CHECK(sb_config_set(&cfg, "instance", "sagebox-2", "--instance", &err) == 0 &&
	      !strcmp(sb_config_instance(&cfg), "sagebox-2"));
	CHECK(sb_config_set(&cfg, "instance", "Node_1", "--instance", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "--instance: invalid instance 'Node_1'");
	CHECK(sb_config_set(&cfg, "instance", "abcdefghijklmnopqrstuvwxyz0123456", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "instance", "", "x", &err) == 0 && sb_instance_name_ok(sb_config_instance(&cfg)));
	CHECK(sb_config_set(&cfg, "drain_timeout", "0", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "drain_timeout", "30", "x", &err) == 0 && cfg.drain_timeout_s == 30);
	CHECK(sb_config_set(&cfg, "timeout", "601", "--timeout", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "--timeout");
	CHECK_STR_CONTAINS(err.hint, "1-600");
	CHECK(sb_config_set(&cfg, "timeout", "0", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "timeout", "-5", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "timeout", "5s", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "timeout", "99999999999999999999", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "memory", "1G", "x", &err) == 0 && cfg.limits.memory_bytes == (1ull << 30));
	CHECK(sb_config_set(&cfg, "memory", "3g", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "memory", "256mmmmmmmmmmmmmmm", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "cpus", "0.1", "x", &err) == 0);
	CHECK(sb_config_set(&cfg, "cpus", "4", "x", &err) == 0);
	CHECK(sb_config_set(&cfg, "cpus", "4.5", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "cpus", "nan", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "pids", "15", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "pids", "512", "x", &err) == 0);
	CHECK(sb_config_set(&cfg, "output_limit_kib", "2048", "x", &err) == 0 && cfg.limits.output_bytes == 2048 * 1024);
	CHECK(sb_config_set(&cfg, "output_limit_kib", "2049", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "backend", "podman", "x", &err) == 0 && !strcmp(cfg.backend, "podman"));
	CHECK(sb_config_set(&cfg, "backend", "lxc", "x", &err) == -1);
	/* the service switch: off by default; --service alone is true */
	CHECK(!cfg.service && cfg.service_idle_s == 600);
	CHECK(sb_config_is_switch("service") && !sb_config_is_switch("timeout"));
	CHECK(sb_config_set(&cfg, "service", "true", "x", &err) == 0 && cfg.service);
	CHECK(sb_config_set(&cfg, "service", "0", "x", &err) == 0 && !cfg.service);
	CHECK(sb_config_set(&cfg, "service", "maybe", "SAGEBOX_SERVICE", &err) == -1 && strstr(err.msg, "SAGEBOX_SERVICE"));
	CHECK(sb_config_set(&cfg, "service_idle_seconds", "0", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "service_idle_seconds", "86400", "x", &err) == 0 && cfg.service_idle_s == 86400);
	CHECK(sb_config_set(&cfg, "service_idle_seconds", "86401", "x", &err) == -1);
	/* An image can never turn into a podman flag (the seed fell back silently). */
	CHECK(sb_config_set(&cfg, "image", "--privileged", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "image", "a b", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "image", "a\tb", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "image", "localhost/sagebox-sage:deb12", "x", &err) == 0);
	CHECK(sb_config_set(&cfg, "sage", "sage", "x", &err) == -1);
	/* A value that is not UTF-8 is refused (found by tests/fuzz: it was
	 * accepted, and the settings then vanished from `status --json`). */
	CHECK(sb_config_set(&cfg, "audit_log", "/tmp/audit\xe5.jsonl", "conf:3", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "conf:3: invalid audit_log: byte 11 of the value is not UTF-8");
	CHECK(sb_config_set(&cfg, "audit_log", "/tmp/audit\xc3\xa9.jsonl", "x", &err) == 0);
	json_t *shown = sb_config_to_json(&cfg);
	CHECK(shown != NULL);
	json_decref(shown);
	CHECK(sb_config_set(&cfg, "nonsense", "1", "x", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "unknown setting");

	/* Flags map to keys. */
	CHECK(!strcmp(sb_config_key_for_flag("--output-limit-kib"), "output_limit_kib"));
	CHECK(sb_config_key_for_flag("--json") == NULL);

	/* File, then environment: the environment wins; errors name file:line. */
	char dir[] = "/tmp/sagebox-test-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[512];
	snprintf(path, sizeof path, "%s/config.ini", dir);
	write_file(path, "# comment\n[sagebox]\ntimeout = 12\nmemory = 1g\n");
	char *env1[] = {"SAGEBOX_TIMEOUT=7", NULL};
	CHECK(sb_config_load(&cfg, path, env1, &err) == 0);
	CHECK(cfg.limits.timeout_s == 7);
	CHECK(!strcmp(cfg.limits.memory, "1g"));
	CHECK(!strcmp(cfg.config_path, path));

	write_file(path, "timeout = 10\n\npids = 9000\n");
	CHECK(sb_config_load(&cfg, path, noenv, &err) == -1);
	char want[600];
	snprintf(want, sizeof want, "%s:3", path);
	CHECK_STR_CONTAINS(err.msg, want);
	CHECK_STR_CONTAINS(err.hint, "16-512");

	write_file(path, "this is not ini\n");
	CHECK(sb_config_load(&cfg, path, noenv, &err) == -1);
	CHECK_STR_CONTAINS(err.msg, ":1");

	char *env2[] = {"SAGEBOX_MEMORY=5g", NULL};
	CHECK(sb_config_load(&cfg, NULL, env2, &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "SAGEBOX_MEMORY");

	/* XDG default location is read when present. */
	char xdg[300], sub[200];
	snprintf(sub, sizeof sub, "%s/sagebox", dir);
	mkdir(sub, 0700);
	snprintf(path, sizeof path, "%s/config.ini", sub);
	write_file(path, "cpus = 2\n");
	snprintf(xdg, sizeof xdg, "XDG_CONFIG_HOME=%s", dir);
	char *env3[] = {xdg, NULL};
	CHECK(sb_config_load(&cfg, NULL, env3, &err) == 0 && cfg.limits.cpus == 2.0);
	/* A named file that does not exist is an error; the default one is not. */
	CHECK(sb_config_load(&cfg, "/nonexistent/sagebox.ini", noenv, &err) == -1);
	char *env4[] = {"XDG_CONFIG_HOME=/nonexistent", NULL};
	CHECK(sb_config_load(&cfg, NULL, env4, &err) == 0);

	/* Sessions' settings: ranges, sizes, shares, export_dir. */
	sb_config_defaults(&cfg);
	CHECK(cfg.max_sessions == 4 && cfg.session_idle_minutes == 30 && cfg.job_timeout_s == 3600 &&
	      cfg.max_jobs == 4 && cfg.workspace_bytes == 256ull << 20 && cfg.n_shares == 0 && !cfg.export_dir[0]);
	CHECK(sb_config_set(&cfg, "max_sessions", "0", "x", &err) == 0 && cfg.max_sessions == 0);
	CHECK(sb_config_set(&cfg, "max_sessions", "33", "--max-sessions", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "--max-sessions");
	CHECK_STR_CONTAINS(err.hint, "0-32");
	/* Totals of all clients together: 1-256, no "off" (0 is refused). */
	CHECK(cfg.max_sessions_total == 16 && cfg.max_jobs_total == 16);
	CHECK(sb_config_set(&cfg, "max_sessions_total", "0", "--max-sessions-total", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "--max-sessions-total");
	CHECK_STR_CONTAINS(err.hint, "1-256");
	CHECK(sb_config_set(&cfg, "max_sessions_total", "257", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "max_sessions_total", "256", "x", &err) == 0 && cfg.max_sessions_total == 256);
	CHECK(sb_config_set(&cfg, "max_jobs_total", "0", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "max_jobs_total", "1", "x", &err) == 0 && cfg.max_jobs_total == 1);
	CHECK(!strcmp(sb_config_key_for_flag("--max-jobs-total"), "max_jobs_total"));
	char *env_totals[] = {"SAGEBOX_MAX_SESSIONS_TOTAL=3", "SAGEBOX_MAX_JOBS_TOTAL=5", "XDG_CONFIG_HOME=/nonexistent", NULL};
	CHECK(sb_config_load(&cfg, NULL, env_totals, &err) == 0 && cfg.max_sessions_total == 3 && cfg.max_jobs_total == 5);
	json_t *tj = sb_config_to_json(&cfg);
	CHECK(json_integer_value(json_object_get(tj, "max_sessions_total")) == 3 &&
	      json_integer_value(json_object_get(tj, "max_jobs_total")) == 5);
	json_decref(tj);
	sb_config_defaults(&cfg);
	CHECK(sb_config_set(&cfg, "session_idle_minutes", "0", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "job_timeout", "86400", "x", &err) == 0 && cfg.job_timeout_s == 86400);
	CHECK(sb_config_set(&cfg, "job_timeout", "86401", "x", &err) == -1);
	/* MCP tasks: the longest TTL, 1 h by default, 60 s to 7 days. */
	CHECK(cfg.task_ttl_s == 3600);
	CHECK(sb_config_set(&cfg, "task_ttl", "59", "--task-ttl", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "--task-ttl");
	CHECK_STR_CONTAINS(err.hint, "60-604800");
	CHECK(sb_config_set(&cfg, "task_ttl", "604801", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "task_ttl", "120", "x", &err) == 0 && cfg.task_ttl_s == 120);
	CHECK(!strcmp(sb_config_key_for_flag("--task-ttl"), "task_ttl"));
	tj = sb_config_to_json(&cfg);
	CHECK(json_integer_value(json_object_get(tj, "task_ttl")) == 120);
	json_decref(tj);
	CHECK(sb_config_set(&cfg, "workspace_size", "1G", "x", &err) == 0 && cfg.workspace_bytes == 1ull << 30);
	CHECK(sb_config_set(&cfg, "workspace_size", "1048576", "x", &err) == 0 && cfg.workspace_bytes == 1ull << 20);
	CHECK(sb_config_set(&cfg, "workspace_size", "17g", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "workspace_size", "512k", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "workspace_size", "1t", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "workspace_size", "99999999999999999999g", "x", &err) == -1);
	CHECK(!strcmp(sb_config_key_for_flag("--session-idle-minutes"), "session_idle_minutes"));
	char d1[300], d2[300], d3[300];
	snprintf(d1, sizeof d1, "%s/papers", dir);
	snprintf(d2, sizeof d2, "%s/more", dir);
	snprintf(d3, sizeof d3, "%s/more/papers", dir);
	mkdir(d1, 0755);
	mkdir(d2, 0755);
	mkdir(d3, 0755);
	char list[700];
	snprintf(list, sizeof list, "%s,%s", d1, d2);
	CHECK(sb_config_set(&cfg, "share", list, "x", &err) == 0 && cfg.n_shares == 2);
	CHECK(!strcmp(cfg.shares[0], d1) && !strcmp(cfg.shares[1], d2));
	snprintf(list, sizeof list, "%s,%s", d1, d3);
	CHECK(sb_config_set(&cfg, "share", list, "--share", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "same name");
	CHECK(sb_config_set(&cfg, "share", "relative/dir", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "share", "/nonexistent/dir", "x", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "does not exist");
	CHECK(sb_config_set(&cfg, "share", "/", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "share", "/etc/passwd", "x", &err) == -1);
	CHECK_STR_CONTAINS(err.msg, "not a directory");
	CHECK(sb_config_set(&cfg, "share", "", "x", &err) == 0 && cfg.n_shares == 0);
	CHECK(sb_config_set(&cfg, "export_dir", d2, "x", &err) == 0 && !strcmp(cfg.export_dir, d2));
	CHECK(sb_config_set(&cfg, "export_dir", "/nonexistent", "x", &err) == -1);
	CHECK(sb_config_set(&cfg, "export_dir", "", "x", &err) == 0 && !cfg.export_dir[0]);
	rmdir(d3);
	rmdir(d2);
	rmdir(d1);

	unlink(path);
	rmdir(sub);
	snprintf(path, sizeof path, "%s/config.ini", dir);
	unlink(path);
	rmdir(dir);
	return check_summary();
}
