/* The policy table and its OCI compilation (no container needed; the
 * behaviour inside a container is tests/podman/test_policy.py). Compiles
 * containers-common's default profile when present, else a small one of the
 * same shape, and checks that no rule of the result lets a refused call
 * through unconditionally, and that every row is there with its errno; and
 * that a podman container's own uid stays inside the mapped range. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sandbox/podman/podman.h"
#include "sandbox/policy.h"

static json_t *base_profile(void)
{
	json_t *p = json_load_file("/usr/share/containers/seccomp.json", 0, NULL);
	if (p)
		return p;
	return json_pack("{s:s, s:i, s:[{s:[s,s,s,s,s], s:s, s:[]}]}", "defaultAction", "SCMP_ACT_ERRNO",
			 "defaultErrnoRet", ENOSYS, "syscalls", "names", "read", "clone", "ptrace", "ioctl", "mq_open",
			 "action", "SCMP_ACT_ALLOW", "args");
}

static bool names_has(json_t *rule, const char *name)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(rule, "names"), i, v) if (!strcmp(json_string_value(v), name)) return true;
	return false;
}

int main(void)
{
	size_t n;
	const struct sb_policy_rule *rules = sb_policy_rules(&n);
	CHECK(n > 10);
	json_t *p = base_profile();
	char why[512] = "";
	CHECK(pm_seccomp_compile(p, why, sizeof why) == 0);
	json_t *syscalls = json_object_get(p, "syscalls");
	for (size_t r = 0; r < n; r++)
		for (size_t k = 0; k < SB_POLICY_MAX_NAMES && rules[r].names[k]; k++) {
			const char *name = rules[r].names[k];
			bool unconditional_allow = false, errno_rule = false;
			size_t i;
			json_t *rule;
			json_array_foreach(syscalls, i, rule) {
				if (!names_has(rule, name))
					continue;
				const char *action = json_string_value(json_object_get(rule, "action"));
				bool has_args = json_array_size(json_object_get(rule, "args")) > 0;
				if (!strcmp(action, "SCMP_ACT_ALLOW") && !has_args)
					unconditional_allow = true;
				if (!strcmp(action, "SCMP_ACT_ERRNO") &&
				    json_integer_value(json_object_get(rule, "errnoRet")) == rules[r].errnum)
					errno_rule = true;
			}
			if (unconditional_allow || !errno_rule)
				fprintf(stderr, "%s: unconditional allow %d, errno rule %d\n", name, unconditional_allow,
					errno_rule);
			CHECK(!unconditional_allow);
			CHECK(errno_rule);
		}
	/* only the host's architecture: other ABIs meet the bad-arch action */
	CHECK(json_array_size(json_object_get(p, "archMap")) == 1);
	CHECK(json_object_get(p, "architectures") == NULL);
	json_decref(p);

	json_t *j = sb_policy_json();
	CHECK(json_array_size(json_object_get(j, "rules")) == n);
	json_decref(j);

	/* A container's own uid stays inside what podman maps for the host
	 * user (uid_top), and there is none when too few uids are mapped. */
	for (int t = 0; t < 200; t++) {
		unsigned u = pm_container_uid(0);
		CHECK(u >= PM_UID_FIRST && u < PM_UID_FIRST + PM_UID_COUNT);
		u = pm_container_uid(65537);
		CHECK(u >= PM_UID_FIRST && u < PM_UID_FIRST + PM_UID_COUNT);
		u = pm_container_uid(PM_UID_FIRST + PM_UID_MIN_COUNT);
		CHECK(u >= PM_UID_FIRST && u < PM_UID_FIRST + PM_UID_MIN_COUNT);
	}
	CHECK(pm_container_uid(PM_UID_FIRST + PM_UID_MIN_COUNT - 1) == 0);
	CHECK(pm_container_uid(1) == 0);
	return check_summary();
}
