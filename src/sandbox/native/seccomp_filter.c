/* seccomp, applied last: a deny-list on top of everything else, for the
 * kernel interfaces that sandbox escapes and kernel exploits go through.
 * Built once with libseccomp in the caller (it allocates), exported as a
 * BPF program, and loaded in each command with the raw system call. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox/native/native.h"

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

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Denied with EPERM, each for the attack it is the door to. */
static const char *const denied[] = {
	/* namespaces: new user namespaces regain capabilities and widen the
	 * kernel attack surface; setns would enter another container's */
	"unshare", "setns",
	/* the filesystem view is fixed: no mounts, no pivot, no chroot tricks */
	"mount", "umount2", "umount", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
	"fsmount", "fsconfig", "fspick", "mount_setattr",
	/* kernel keyrings are shared state and a classic exploit target */
	"keyctl", "add_key", "request_key",
	/* eBPF and perf: large kernel attack surface, side channels */
	"bpf", "perf_event_open",
	/* reading or writing another process's memory */
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	/* io_uring bypasses seccomp for the operations it performs */
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	/* userfaultfd makes kernel race exploits reliable */
	"userfaultfd",
	/* loading kernels and modules, machine-wide state */
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "acct",
	"swapon", "swapoff", "reboot", "syslog", "quotactl", "quotactl_fd", "vhangup",
	"lookup_dcookie", "nfsservctl", "uselib", "iopl", "ioperm", "settimeofday",
	"clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
	/* file handles open any file on a filesystem, bypassing paths
	 * (the "shocker" container escape) */
	"open_by_handle_at", "name_to_handle_at",
	/* the fanotify/mknod family needs capabilities we do not have anyway */
	"fanotify_init",
};

static struct sock_fprog g_prog;
static char g_error[512];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static int deny(scmp_filter_ctx ctx, const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return 0; /* unknown to this libseccomp: nothing to deny */
	int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
	return rc == -EDOM ? 0 : rc; /* a pseudo-syscall this arch lacks */
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
	for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++)
		if ((rc = deny(ctx, denied[i])) != 0)
			return rc;
#ifdef __NR_open_tree_attr
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), __NR_open_tree_attr, 0)) != 0)
		return rc;
#endif
	/* clone with a namespace flag: same reason as unshare. */
	static const unsigned long ns_flags[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,    CLONE_NEWNET,
						 CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP, CLONE_NEWTIME};
	for (size_t i = 0; i < sizeof ns_flags / sizeof ns_flags[0]; i++)
		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
					   SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]))) != 0)
			return rc;
	/* clone3 passes its flags in memory a filter cannot read: ENOSYS
	 * makes glibc fall back to clone, which is checked above. */
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) != 0)
		return rc;
	/* TIOCSTI pushes input into a terminal (command injection into the
	 * caller's shell); TIOCLINUX can do the same on a VT. The kernel
	 * reads only the low 32 bits of the request: compare those only, or
	 * 0xFFFFFFFF00005412 would slip through. */
	static const unsigned long ioctls[] = {TIOCSTI, TIOCLINUX};
	for (size_t i = 0; i < 2; i++)
		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
					   SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFul, ioctls[i]))) != 0)
			return rc;
	return 0;
}

static void compile_once(void)
{
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
	int fd = memfd_create("sagebox-seccomp", MFD_CLOEXEC);
	struct stat st;
	if (fd < 0 || (rc = seccomp_export_bpf(ctx, fd)) != 0 || fstat(fd, &st) != 0 || st.st_size <= 0 ||
	    st.st_size % (off_t)sizeof(struct sock_filter) != 0) {
		snprintf(g_error, sizeof g_error, "libseccomp: exporting the filter failed");
		if (fd >= 0)
			close(fd);
		seccomp_release(ctx);
		return;
	}
	seccomp_release(ctx);
	struct sock_filter *f = malloc((size_t)st.st_size);
	if (!f || pread(fd, f, (size_t)st.st_size, 0) != st.st_size) {
		snprintf(g_error, sizeof g_error, "reading the exported seccomp filter failed");
		free(f);
		close(fd);
		return;
	}
	close(fd);
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

/* personality() with exactly one of Docker's allowed values: Linux, with
 * or without ADDR_NO_RANDOMIZE / UNAME26, or the query 0xffffffff. Flags
 * such as READ_IMPLIES_EXEC or MMAP_PAGE_ZERO only help exploits. An
 * allow-list on one argument needs two comparisons, which libseccomp 2.5
 * cannot express in one rule, so this tiny filter is written by hand (it
 * stacks with the main one; the strictest verdict wins). */
#define PERS_ERRNO (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
static struct sock_filter g_pers_insns[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NAT_AUDIT_ARCH, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), /* foreign arch: the main filter kills */
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_personality, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]) + NAT_ARG_HI),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, PERS_ERRNO),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]) + NAT_ARG_LO),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0, 5, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x8, 4, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20000, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20008, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffff, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, PERS_ERRNO),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
static const struct sock_fprog g_pers = {
	.len = sizeof g_pers_insns / sizeof g_pers_insns[0],
	.filter = g_pers_insns,
};

int nat_seccomp_load(const struct sock_fprog *prog)
{
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &g_pers) != 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog);
}
