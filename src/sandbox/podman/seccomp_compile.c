/* The syscall policy (sandbox/policy.c) compiled onto an OCI seccomp
 * profile: the engine's default, whose default action is ERRNO(ENOSYS) and
 * whose rules allow what containers need.
 *
 * OCI runtimes build the filter with libseccomp, where an unconditional
 * ALLOW of a call swallows any conditional ERRNO of the same call. So each
 * name of the table is first taken out of every rule of the profile, then
 * the row is added back as rules whose conditions partition the calls:
 *   always          ERRNO(e)
 *   any of flags    ALLOW when arg & (all flags) == 0; ERRNO(e) per flag
 *   low 32 bits     ERRNO(e) per value (arg & 0xFFFFFFFF == v); ALLOW with a
 *                   condition that always holds on a LOWER argument (libseccomp
 *                   checks higher arguments first, so the ERRNO rules win)
 *   unless equal    ALLOW per value, and ERRNO(e) for the rest: where every
 *                   value is small (socket families), per value from 0 to
 *                   the largest that is not allowed and above the largest;
 *                   else (personality) for a high half, and per low bit
 *                   that no allowed value below 0xFFFFFFFF has
 *   guarded         (the netlink protocols, AF_NETLINK alone) in place of
 *                   the ALLOW of the guard's value in the row it refines,
 *                   each of its rules with the guard's condition added
 * and only the host's own architecture is kept: calls through another ABI
 * (i386 int 0x80, x32) meet the runtime's bad-arch action, as in native.
 * tests/lib/policy_probe.py checks the result from inside a container. */
#include "sandbox/podman/podman.h"

#include <stdio.h>
#include <string.h>

#include "sandbox/policy.h"

#if defined(__x86_64__)
#define PM_SECCOMP_ARCH "SCMP_ARCH_X86_64"
#elif defined(__aarch64__)
#define PM_SECCOMP_ARCH "SCMP_ARCH_AARCH64"
#else
#error "add this architecture's SCMP_ARCH name"
#endif

static bool in_table(const char *name)
{
	size_t n;
	const struct sb_policy_rule *rules = sb_policy_rules(&n);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < SB_POLICY_MAX_NAMES && rules[i].names[k]; k++)
			if (!strcmp(rules[i].names[k], name))
				return true;
	return false;
}

/* Take every name of the table out of every rule; drop emptied rules. */
static void strip_table_names(json_t *syscalls)
{
	for (size_t i = json_array_size(syscalls); i-- > 0;) {
		json_t *names = json_object_get(json_array_get(syscalls, i), "names");
		for (size_t k = json_array_size(names); k-- > 0;) {
			const char *n = json_string_value(json_array_get(names, k));
			if (n && in_table(n))
				json_array_remove(names, k);
		}
		if (json_is_array(names) && json_array_size(names) == 0)
			json_array_remove(syscalls, i);
	}
}

static json_t *cond(unsigned arg, const char *op, uint64_t value, uint64_t value_two)
{
	return json_pack("{s:i, s:I, s:I, s:s}", "index", (int)arg, "value", (json_int_t)value, "valueTwo",
			 (json_int_t)value_two, "op", op);
}

/* One rule: one call, ALLOW or ERRNO(e), the row's guard (if any) and zero
 * or one condition of its own. */
static void add(json_t *syscalls, const char *name, const struct sb_policy_rule *r, bool allow, json_t *condition)
{
	json_t *rule = json_pack("{s:[s], s:s}", "names", name, "action", allow ? "SCMP_ACT_ALLOW" : "SCMP_ACT_ERRNO");
	if (!allow)
		json_object_set_new(rule, "errnoRet", json_integer(r->errnum));
	json_t *args = json_array();
	if (r->guarded)
		json_array_append_new(args, cond(r->guard_arg, "SCMP_CMP_EQ", r->guard_value, 0));
	if (condition)
		json_array_append_new(args, condition);
	json_object_set_new(rule, "args", args);
	json_array_append_new(syscalls, rule);
}

/* The guarded row refining r's value v for name, if any. */
static const struct sb_policy_rule *refinement(const struct sb_policy_rule *r, const char *name, uint64_t v)
{
	size_t n;
	const struct sb_policy_rule *rules = sb_policy_rules(&n);
	for (size_t i = 0; i < n; i++) {
		const struct sb_policy_rule *g = &rules[i];
		if (!g->guarded || r->guarded || g->guard_arg != r->arg || g->guard_value != v)
			continue;
		for (size_t k = 0; k < SB_POLICY_MAX_NAMES && g->names[k]; k++)
			if (!strcmp(g->names[k], name))
				return g;
	}
	return NULL;
}

/* Every guarded row must refine an allowed value of an unguarded row of
 * each of its calls: alone, its rules would overlap the others. */
static int check_guards(char *why, size_t n)
{
	size_t nrules;
	const struct sb_policy_rule *rules = sb_policy_rules(&nrules);
	for (size_t i = 0; i < nrules; i++) {
		const struct sb_policy_rule *g = &rules[i];
		if (!g->guarded)
			continue;
		for (size_t k = 0; k < SB_POLICY_MAX_NAMES && g->names[k]; k++) {
			bool found = false;
			for (size_t j = 0; j < nrules && !found; j++)
				for (size_t v = 0; rules[j].when == SB_DENY_UNLESS_EQ && v < rules[j].nvalues; v++)
					found |= refinement(&rules[j], g->names[k], rules[j].values[v]) == g;
			if (g->when != SB_DENY_UNLESS_EQ || !found) {
				snprintf(why, n, "the guarded row of %s refines no allowed value of another row", g->names[k]);
				return -1;
			}
		}
	}
	return 0;
}

/* The allowed values below 0xFFFFFFFF must be every combination of their
 * bits, or "deny each other bit" would leave some values to the profile's
 * default instead of the table's errno. */
static int unless_eq_bits(const struct sb_policy_rule *r, uint32_t *bits, char *why, size_t n)
{
	*bits = 0;
	for (size_t k = 0; k < r->nvalues; k++)
		if (r->values[k] != 0xFFFFFFFFull)
			*bits |= (uint32_t)r->values[k];
	if (__builtin_popcount(*bits) > 8)
		goto bad;
	for (uint32_t sub = *bits;; sub = (sub - 1) & *bits) {
		bool listed = false;
		for (size_t k = 0; k < r->nvalues; k++)
			listed |= r->values[k] == sub;
		if (!listed)
			goto bad;
		if (!sub)
			break;
	}
	return 0;
bad:
	snprintf(why, n, "the allow-list of %s cannot be expressed in an OCI profile", r->names[0]);
	return -1;
}

/* Values up to this are refused one by one (socket families: AF_MAX is 46). */
#define ENUMERATE_MAX 64

static bool allowed(const struct sb_policy_rule *r, uint64_t v)
{
	for (size_t k = 0; k < r->nvalues; k++)
		if (r->values[k] == v)
			return true;
	return false;
}

static int add_row(json_t *syscalls, const struct sb_policy_rule *r, const char *name, char *why, size_t n);

static int add_unless_eq(json_t *syscalls, const struct sb_policy_rule *r, const char *name, char *why, size_t n)
{
	uint64_t max = 0;
	for (size_t k = 0; k < r->nvalues; k++) {
		const struct sb_policy_rule *g = refinement(r, name, r->values[k]);
		if (g) {
			if (add_row(syscalls, g, name, why, n) < 0)
				return -1;
		} else {
			add(syscalls, name, r, true, cond(r->arg, "SCMP_CMP_EQ", r->values[k], 0));
		}
		max = r->values[k] > max ? r->values[k] : max;
	}
	if (max <= ENUMERATE_MAX) {
		for (uint64_t v = 0; v < max; v++)
			if (!allowed(r, v))
				add(syscalls, name, r, false, cond(r->arg, "SCMP_CMP_EQ", v, 0));
		add(syscalls, name, r, false, cond(r->arg, "SCMP_CMP_GT", max, 0));
		return 0;
	}
	uint32_t bits;
	if (unless_eq_bits(r, &bits, why, n) < 0)
		return -1;
	add(syscalls, name, r, false, cond(r->arg, "SCMP_CMP_GT", 0xFFFFFFFFull, 0));
	for (int b = 0; b < 32; b++)
		if (!(bits & (1u << b)))
			add(syscalls, name, r, false, cond(r->arg, "SCMP_CMP_MASKED_EQ", 1ull << b, 1ull << b));
	return 0;
}

static int add_row(json_t *syscalls, const struct sb_policy_rule *r, const char *name, char *why, size_t n)
{
	uint64_t all = 0;
	switch (r->when) {
	case SB_DENY_ALWAYS:
		add(syscalls, name, r, false, NULL);
		return 0;
	case SB_DENY_ANY_FLAG:
		for (size_t k = 0; k < r->nvalues; k++) {
			all |= r->values[k];
			add(syscalls, name, r, false, cond(r->arg, "SCMP_CMP_MASKED_EQ", r->values[k], r->values[k]));
		}
		add(syscalls, name, r, true, cond(r->arg, "SCMP_CMP_MASKED_EQ", all, 0));
		return 0;
	case SB_DENY_LOW32_EQ:
		if (r->arg == 0) {
			snprintf(why, n, "%s: a 32-bit comparison on the first argument cannot be expressed",
				 r->names[0]);
			return -1;
		}
		for (size_t k = 0; k < r->nvalues; k++)
			add(syscalls, name, r, false, cond(r->arg, "SCMP_CMP_MASKED_EQ", 0xFFFFFFFFull, r->values[k]));
		add(syscalls, name, r, true, cond(r->arg - 1, "SCMP_CMP_GE", 0, 0));
		return 0;
	case SB_DENY_UNLESS_EQ:
		return add_unless_eq(syscalls, r, name, why, n);
	}
	snprintf(why, n, "unknown condition in the policy table");
	return -1;
}

int pm_seccomp_compile(json_t *profile, char *why, size_t n)
{
	json_t *syscalls = json_object_get(profile, "syscalls");
	if (!json_is_array(syscalls)) {
		snprintf(why, n, "the engine's default seccomp profile has no \"syscalls\" list");
		return -1;
	}
	strip_table_names(syscalls);
	size_t nrules;
	const struct sb_policy_rule *rules = sb_policy_rules(&nrules);
	if (check_guards(why, n) < 0)
		return -1;
	for (size_t i = 0; i < nrules; i++)
		for (size_t k = 0; k < SB_POLICY_MAX_NAMES && rules[i].names[k] && !rules[i].guarded; k++)
			if (add_row(syscalls, &rules[i], rules[i].names[k], why, n) < 0)
				return -1;
	json_object_del(profile, "architectures");
	json_object_set_new(profile, "archMap",
			    json_pack("[{s:s, s:[]}]", "architecture", PM_SECCOMP_ARCH, "subArchitectures"));
	return 0;
}
