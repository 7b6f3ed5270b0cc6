/* The syscall policy: ONE table of what sandboxed code may not call, how it
 * is refused, why, and which attack it stops. Each backend with
 * SB_CAP_POLICY compiles it: native to a libseccomp filter
 * (native/seccomp_filter.c), podman/docker to an OCI seccomp profile
 * (podman/seccomp.c). Neither keeps a list of its own, so they cannot
 * drift; tests/lib/policy_probe.py checks from inside each backend that
 * every row is refused as the table says. `sagebox policy` prints it. */
#ifndef SAGEBOX_POLICY_H
#define SAGEBOX_POLICY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* When a row refuses a call. */
enum sb_policy_when {
	SB_DENY_ALWAYS,      /* every call */
	SB_DENY_ANY_FLAG,    /* args[arg] has any of values[] (single-bit flags) set */
	SB_DENY_LOW32_EQ,    /* (uint32_t)args[arg] is one of values[]: the kernel reads
				only 32 bits, so 0xFFFFFFFF00005412 is TIOCSTI too */
	SB_DENY_UNLESS_EQ,   /* args[arg] is none of values[] (an allow-list) */
};

#define SB_POLICY_MAX_NAMES 16
#define SB_POLICY_MAX_VALUES 8

struct sb_policy_rule {
	const char *names[SB_POLICY_MAX_NAMES]; /* libseccomp/OCI spelling; NULL ends */
	int errnum;                             /* what the caller gets */
	enum sb_policy_when when;
	unsigned arg;                           /* the argument `when` reads */
	uint64_t values[SB_POLICY_MAX_VALUES];
	size_t nvalues;
	const char *why;                        /* what the call does */
	const char *stops;                      /* the attack it is a door to */
	/* A row may concern only the calls whose args[guard_arg] is exactly
	 * guard_value (the netlink protocols: AF_NETLINK sockets alone). Only
	 * SB_DENY_UNLESS_EQ rows are guarded, and each refines an unguarded
	 * row of the same call that allows guard_value: the OCI profile puts
	 * the guarded row's rules where that value's ALLOW would be, so the
	 * rules of one call never overlap (seccomp_compile.c). */
	bool guarded;
	unsigned guard_arg;
	uint64_t guard_value;
};

/* The table, and its length. */
const struct sb_policy_rule *sb_policy_rules(size_t *n);

/* The number of a call on this architecture: libseccomp's, or ours for
 * calls newer than it. Negative (libseccomp's pseudo numbers, or
 * __NR_SCMP_ERROR) where this architecture has no such call. */
int sb_policy_syscall_nr(const char *name);

/* The policy for people and tests: every row with its names, their
 * numbers on this architecture (-1 where libseccomp does not know one), the
 * errno by name and number, the condition, why and what it stops. */
json_t *sb_policy_json(void);

/* Foreign architectures (i386 int 0x80, x32 on x86_64) would reach system
 * calls the table names by their native numbers only: both compilations
 * kill such a process instead. */
#define SB_POLICY_FOREIGN_ARCH "killed (SIGSYS)"

#endif
