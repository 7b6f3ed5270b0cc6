/* The policy table and its OCI compilation (no container needed; the
 * behaviour inside a container is tests/podman/test_policy.py). Compiles
 * containers-common's default profile when present, else a small one of the
 * same shape, and checks that no rule of the result lets a refused call
 * through unconditionally, and that every row is there with its errno; and
 * that a podman container's own uid stays inside the mapped range. */
#include <errno.h>
#include <stdint.h>
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

/* The table's verdict for a call: the errno of the first row that refuses
 * it, or 0. */
static int table_verdict(const char *name, const uint64_t *args)
{
	size_t n;
	const struct sb_policy_rule *rules = sb_policy_rules(&n);
	for (size_t r = 0; r < n; r++) {
		const struct sb_policy_rule *row = &rules[r];
		bool named = false;
		for (size_t k = 0; k < SB_POLICY_MAX_NAMES && row->names[k]; k++)
			named |= !strcmp(row->names[k], name);
		if (!named || (row->guarded && args[row->guard_arg] != row->guard_value))
			continue;
		bool listed = false, flagged = false;
		for (size_t v = 0; v < row->nvalues; v++) {
			listed |= args[row->arg] == row->values[v];
			flagged |= (args[row->arg] & row->values[v]) != 0;
		}
		bool refused = row->when == SB_DENY_ALWAYS || (row->when == SB_DENY_ANY_FLAG && flagged) ||
			       (row->when == SB_DENY_UNLESS_EQ && !listed);
		if (row->when == SB_DENY_LOW32_EQ)
			for (size_t v = 0; v < row->nvalues; v++)
				refused |= (uint32_t)args[row->arg] == row->values[v];
		if (refused)
			return row->errnum;
	}
	return 0;
}

static bool cond_holds(json_t *c, const uint64_t *args)
{
	uint64_t a = args[json_integer_value(json_object_get(c, "index"))];
	uint64_t v = (uint64_t)json_integer_value(json_object_get(c, "value"));
	uint64_t two = (uint64_t)json_integer_value(json_object_get(c, "valueTwo"));
	const char *op = json_string_value(json_object_get(c, "op"));
	return !strcmp(op, "SCMP_CMP_EQ")	 ? a == v
	       : !strcmp(op, "SCMP_CMP_NE")	 ? a != v
	       : !strcmp(op, "SCMP_CMP_GT")	 ? a > v
	       : !strcmp(op, "SCMP_CMP_GE")	 ? a >= v
	       : !strcmp(op, "SCMP_CMP_LT")	 ? a < v
	       : !strcmp(op, "SCMP_CMP_LE")	 ? a <= v
	       : !strcmp(op, "SCMP_CMP_MASKED_EQ") ? (a & v) == two
						     : false;
}

/* The compiled profile's verdict: every rule of the call whose conditions
 * all hold must agree (an ALLOW beside an ERRNO would be libseccomp's to
 * pick); -1 when they do not, -2 when none holds (the default action). */
static int profile_verdict(json_t *syscalls, const char *name, const uint64_t *args)
{
	int verdict = -2;
	size_t i, k;
	json_t *rule, *c;
	json_array_foreach(syscalls, i, rule) {
		if (!names_has(rule, name))
			continue;
		bool holds = true;
		json_array_foreach(json_object_get(rule, "args"), k, c) holds = holds && cond_holds(c, args);
		if (!holds)
			continue;
		int v = !strcmp(json_string_value(json_object_get(rule, "action")), "SCMP_ACT_ALLOW")
				? 0
				: (int)json_integer_value(json_object_get(rule, "errnoRet"));
		if (verdict != -2 && verdict != v)
			return -1;
		verdict = v;
	}
	return verdict;
}

/* The socket allow-lists (families and, for AF_NETLINK, protocols)
 * compiled for the OCI runtime say what the table says for each family,
 * protocol and value around them, and no ALLOW rule overlaps an ERRNO rule
 * of the same call. (personality's query, 0xffffffff, is allowed by an EQ
 * rule beside ERRNO rules per bit: the engine's libseccomp lets the EQ win,
 * which tests/podman/test_policy.py checks from inside.) */
static void check_allow_lists(json_t *syscalls)
{
	static const uint64_t probe[] = {0, 1, 2, 3, 8, 9, 10, 11, 15, 16, 17, 38, 40, 46, 63, 64, 65, 0x20000, 0x20008,
					 0x400000, 0xfffffffe, 0xffffffff, 0x100000000ull, 0x100000001ull,
					 0x100000010ull, 0xffffffffffffffffull};
	static const char *const names[] = {"socket", "socketpair"};
	for (size_t n = 0; n < sizeof names / sizeof *names; n++)
		for (size_t a = 0; a < sizeof probe / sizeof *probe; a++)
			for (size_t b = 0; b < sizeof probe / sizeof *probe; b++) {
				uint64_t args[6] = {probe[a], 1, probe[b], 0, 0, 0};
				int want = table_verdict(names[n], args), got = profile_verdict(syscalls, names[n], args);
				if (want != got)
					fprintf(stderr, "%s(0x%llx, 1, 0x%llx): the table says %d, the profile %d\n", names[n],
						(unsigned long long)args[0], (unsigned long long)args[2], want, got);
				CHECK(want == got);
			}
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
	check_allow_lists(syscalls);
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
