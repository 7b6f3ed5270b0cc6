/* seccomp, applied last: the syscall policy (sandbox/policy.c) compiled
 * with libseccomp, a deny-list on top of everything else for the kernel
 * interfaces that sandbox escapes and kernel exploits go through. Built
 * once in the caller (libseccomp allocates), exported as a BPF program, and
 * loaded in each command with the raw system call. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/native/native.h"
#include "sandbox/policy.h"
#include "util/fd.h"

#if defined(__x86_64__)
#define NAT_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NAT_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "add this architecture's AUDIT_ARCH value"
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NAT_ARG_LO 0
#define NAT_ARG_HI 4
#else
#define NAT_ARG_LO 4
#define NAT_ARG_HI 0
#endif

static struct sock_fprog g_prog;
static char g_error[512];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* A name this architecture or this libseccomp does not know is nothing to
 * deny; -EDOM: a pseudo-syscall this arch lacks (umount on x86_64). */
static int tolerate(int rc)
{
	return rc == -EDOM ? 0 : rc;
}

static int add_row(scmp_filter_ctx ctx, const struct sb_policy_rule *r, int nr)
{
	uint32_t act = SCMP_ACT_ERRNO((uint32_t)r->errnum);
	int rc = 0;
	switch (r->when) {
	case SB_DENY_ALWAYS:
		return tolerate(seccomp_rule_add(ctx, act, nr, 0));
	case SB_DENY_ANY_FLAG:
		for (size_t k = 0; k < r->nvalues && !rc; k++)
			rc = seccomp_rule_add(ctx, act, nr, 1,
					      SCMP_CMP(r->arg, SCMP_CMP_MASKED_EQ, r->values[k], r->values[k]));
		return tolerate(rc);
	case SB_DENY_LOW32_EQ:
		for (size_t k = 0; k < r->nvalues && !rc; k++)
			rc = seccomp_rule_add(ctx, act, nr, 1,
					      SCMP_CMP(r->arg, SCMP_CMP_MASKED_EQ, 0xFFFFFFFFull, r->values[k]));
		return tolerate(rc);
	case SB_DENY_UNLESS_EQ:
		return 0; /* an allow-list on one argument: allow_list_filter() */
	}
	return -EINVAL;
}

static int build(scmp_filter_ctx ctx)
{
	int rc;
	/* Foreign architectures (i386 int 0x80, x32) would reach system
	 * calls this filter never names: kill the process instead. */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) != 0)
		return rc;
	/* no_new_privs is set by the command itself (before Landlock). */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) != 0)
		return rc;
	size_t n;
	const struct sb_policy_rule *rules = sb_policy_rules(&n);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < SB_POLICY_MAX_NAMES && rules[i].names[k]; k++) {
			int nr = sb_policy_syscall_nr(rules[i].names[k]);
			if (nr == __NR_SCMP_ERROR)
				continue;
			if ((rc = add_row(ctx, &rules[i], nr)) != 0)
				return rc;
		}
	return 0;
}

/* Rows allowing one argument only a few exact values (personality: Linux,
 * with or without PER_LINUX32 / UNAME26, or the query 0xffffffff; socket:
 * the families and netlink protocols the sandbox needs) need "errno unless
 * one of these", which libseccomp cannot express in a filter whose default
 * is to allow. So they are a small filter of their own, generated from the
 * rows; filters stack and the strictest verdict wins. Per row and name:
 *   the call's number? (else on to the next block)
 *   [guarded: args[guard_arg] == guard_value? (else on)]
 *   args[arg] == one of the values? on to the next block : ERRNO
 * and ALLOW at the end: a call two rows name (socket) passes both. */
#define ALLOW_LIST_MAX 256
static struct sock_filter g_allow_insns[ALLOW_LIST_MAX];
static struct sock_fprog g_allow = {.len = 0, .filter = g_allow_insns};

static uint32_t arg_half(unsigned arg, unsigned half)
{
	return (uint32_t)(offsetof(struct seccomp_data, args[0]) + 8 * arg + half);
}

/* The block of one row for one call number, at f[*i]; -1 when it does not fit. */
static int allow_list_block(const struct sb_policy_rule *r, int nr, size_t *i)
{
	struct sock_filter *f = g_allow_insns;
	const size_t guard = r->guarded ? 4 : 0, len = 2 + guard + 4 * r->nvalues + 1;
	if (*i + len + 1 > ALLOW_LIST_MAX || 4 * r->nvalues + guard + 1 > 255)
		return -1;
	const uint32_t deny = SECCOMP_RET_ERRNO | ((uint32_t)r->errnum & SECCOMP_RET_DATA);
	/* jump offsets count from the next instruction; `past` = the next block */
	size_t past = *i + len;
#define PAST(at) ((uint8_t)(past - (at) - 1))
	f[*i] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	(*i)++;
	f[*i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, PAST(*i));
	(*i)++;
	if (r->guarded) {
		f[*i] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg_half(r->guard_arg, NAT_ARG_HI));
		(*i)++;
		f[*i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(r->guard_value >> 32), 0,
						     PAST(*i));
		(*i)++;
		f[*i] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg_half(r->guard_arg, NAT_ARG_LO));
		(*i)++;
		f[*i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->guard_value, 0, PAST(*i));
		(*i)++;
	}
	for (size_t k = 0; k < r->nvalues; k++) {
		/* both halves equal: on to the next block; else the next value */
		f[*i] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg_half(r->arg, NAT_ARG_HI));
		(*i)++;
		f[*i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(r->values[k] >> 32), 0, 2);
		(*i)++;
		f[*i] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg_half(r->arg, NAT_ARG_LO));
		(*i)++;
		f[*i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->values[k], PAST(*i), 0);
		(*i)++;
	}
#undef PAST
	f[(*i)++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny);
	return 0;
}

static int allow_list_filter(void)
{
	size_t n, i = 0;
	const struct sb_policy_rule *rules = sb_policy_rules(&n);
	struct sock_filter *f = g_allow_insns;
	f[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NAT_AUDIT_ARCH, 1, 0);
	f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW); /* the main filter kills */
	size_t blocks = 0;
	for (size_t k = 0; k < n; k++) {
		const struct sb_policy_rule *r = &rules[k];
		if (r->guarded && r->when != SB_DENY_UNLESS_EQ)
			return -1; /* a guard on another kind would go unenforced */
		if (r->when != SB_DENY_UNLESS_EQ)
			continue;
		if (r->nvalues > SB_POLICY_MAX_VALUES)
			return -1;
		for (size_t m = 0; m < SB_POLICY_MAX_NAMES && r->names[m]; m++) {
			int nr = sb_policy_syscall_nr(r->names[m]);
			if (nr < 0)
				continue; /* no such call on this architecture */
			if (allow_list_block(r, nr, &i))
				return -1;
			blocks++;
		}
	}
	f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	g_allow.len = blocks ? (unsigned short)i : 0;
	return 0;
}

static void compile_once(void)
{
	if (allow_list_filter() != 0) {
		snprintf(g_error, sizeof g_error, "the policy table has an allow-list row the native filter cannot hold");
		return;
	}
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		snprintf(g_error, sizeof g_error, "libseccomp: seccomp_init failed");
		return;
	}
	int rc = build(ctx);
	if (rc != 0) {
		snprintf(g_error, sizeof g_error, "libseccomp: building the filter failed: %s", strerror(-rc));
		seccomp_release(ctx);
		return;
	}
	SB_AUTO_FD fd = memfd_create("sagebox-seccomp", MFD_CLOEXEC);
	struct stat st;
	if (fd < 0 || (rc = seccomp_export_bpf(ctx, fd)) != 0 || fstat(fd, &st) != 0 || st.st_size <= 0 ||
	    st.st_size % (off_t)sizeof(struct sock_filter) != 0) {
		snprintf(g_error, sizeof g_error, "libseccomp: exporting the filter failed");
		seccomp_release(ctx);
		return;
	}
	seccomp_release(ctx);
	struct sock_filter *f = malloc((size_t)st.st_size);
	if (!f || pread(fd, f, (size_t)st.st_size, 0) != st.st_size) {
		snprintf(g_error, sizeof g_error, "reading the exported seccomp filter failed");
		free(f);
		return;
	}
	g_prog.filter = f;
	g_prog.len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
}

const struct sock_fprog *nat_seccomp_program(struct sb_error *err)
{
	pthread_once(&g_once, compile_once);
	if (!g_prog.filter) {
		sb_fail(err, "%s", g_error[0] ? g_error : "the seccomp filter could not be built");
		sb_hint(err, "install libseccomp (apt-get install libseccomp2) and rebuild sagebox");
		return NULL;
	}
	return &g_prog;
}

int nat_seccomp_load(const struct sock_fprog *prog)
{
	if (g_allow.len && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &g_allow) != 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog);
}
