/* The syscall policy table (see policy.h). A row per group of calls that
 * share a reason; the backends compile it, the probe checks it. */
#include "sandbox/policy.h"

#include <errno.h>
#include <seccomp.h>
#include <string.h>

#define VALUES(...) .values = {__VA_ARGS__}, .nvalues = sizeof((uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t)
#define NO_VALUES .values = {0}, .nvalues = 0
#define ONLY_WHERE(arg_, value_) .guarded = true, .guard_arg = (arg_), .guard_value = (value_)

/* linux/sched.h and asm/ioctls.h values, spelled out: the table must not
 * depend on what the build host's headers define. */
#define NS_FLAGS 0x10000000, 0x00020000, 0x20000000, 0x40000000, 0x08000000, 0x04000000, 0x02000000, 0x00000080
/*          CLONE_NEWUSER   NEWNS        NEWPID      NEWNET      NEWIPC      NEWUTS      NEWCGROUP   NEWTIME */
#define S_ISUID_ 04000
#define S_ISGID_ 02000
/* What the mode rows stop (every sandbox mount is nosuid: inside, the bit
 * is inert; outside it is not). */
#define SETID_STOPS                                                                                    \
	"a setuid or setgid file left in the user's project folder, on the host's disk, where it runs with " \
	"the user's identity for whoever executes it"
#define TIOCSTI_ 0x5412
#define TIOCLINUX_ 0x541C
#define AF_UNIX_ 1
#define AF_INET_ 2
#define AF_INET6_ 10
#define AF_NETLINK_ 16
#define NETLINK_ROUTE_ 0

static const struct sb_policy_rule rules[] = {
	{{"unshare", "setns"}, EPERM, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "create or enter namespaces",
	 "a new user namespace gives back every capability inside it and opens kernel code that is "
	 "otherwise root-only (nf_tables, overlayfs, mount API: most recent local privilege escalations); "
	 "setns would enter another container's namespaces"},
	{{"clone"}, EPERM, SB_DENY_ANY_FLAG, 0, VALUES(NS_FLAGS),
	 "clone with a CLONE_NEW* flag (threads and fork stay allowed)",
	 "the same doors as unshare, through clone"},
	{{"clone3"}, ENOSYS, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "clone3: its flags are in memory a filter cannot read",
	 "namespace flags slipping past the clone rule; ENOSYS makes glibc fall back to clone"},
	{{"mount", "umount2", "umount", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr"},
	 EPERM, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "change the filesystem view",
	 "mount tricks that uncover or replace what the sandbox hides (the root is fixed)"},
	{{"open_tree_attr"}, ENOSYS, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "open_tree with mount attributes (Linux 6.15)",
	 "the same as open_tree; ENOSYS because OCI runtimes whose libseccomp predates it can only leave "
	 "it to their default action, ENOSYS"},
	{{"keyctl", "add_key", "request_key"}, EPERM, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "kernel keyrings",
	 "keys are shared per host user (quota and contents) and a classic exploit target"},
	{{"bpf", "perf_event_open"}, EPERM, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "eBPF programs and performance counters",
	 "a large kernel attack surface and side channels on other processes"},
	{{"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd"}, EPERM, SB_DENY_ALWAYS, 0,
	 NO_VALUES,
	 "read or write another process's memory or descriptors",
	 "a job reading the warm worker's memory (earlier jobs' code and output) or stealing its pipes"},
	{{"io_uring_setup", "io_uring_enter", "io_uring_register"}, EPERM, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "io_uring",
	 "operations io_uring performs are never seen by this filter; much of its code is exploit-prone"},
	{{"io_setup"}, ENOSYS, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "Linux AIO contexts (the other io_* calls need one); ENOSYS, as on a kernel without AIO, so that "
	 "programs fall back to plain reads and writes",
	 "AIO events are counted for the whole machine (fs.aio-max-nr, 65536): one job taking them all made "
	 "io_setup fail (EAGAIN) for every process of the host, root's databases and VMs included"},
	{{"userfaultfd"}, EPERM, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "user-space page fault handling",
	 "it makes kernel race conditions reliably exploitable"},
	{{"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "acct", "swapon",
	  "swapoff", "reboot", "syslog", "quotactl", "quotactl_fd", "vhangup", "lookup_dcookie"},
	 EPERM, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "machine-wide administration: kernels, modules, swap, accounting, the kernel log",
	 "host state changes and kernel log reads (kernel addresses for exploits)"},
	{{"nfsservctl", "uselib", "iopl", "ioperm", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	  "sethostname", "setdomainname"},
	 EPERM, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "obsolete interfaces, port I/O, the clock, host names",
	 "raw hardware access and machine-wide settings"},
	{{"open_by_handle_at", "name_to_handle_at"}, EPERM, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "file handles",
	 "opening any file of a filesystem by handle, around every path check (the 'shocker' escape)"},
	{{"fanotify_init"}, EPERM, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "filesystem-wide event watches",
	 "fanotify groups and marks are counted per host user: a job holding them all starves other "
	 "sandboxes and the user's own programs"},
	{{"inotify_init", "inotify_init1"}, EMFILE, SB_DENY_ALWAYS, 0, NO_VALUES,
	 "inotify instances (the error says: the limit, zero here, is reached)",
	 "inotify instances and watches are counted per host user (128 instances by default): a job "
	 "holding them all makes inotify fail in other sandboxes and in the user's own programs"},
	{{"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr"}, EPERM,
	 SB_DENY_ALWAYS, 0, NO_VALUES,
	 "POSIX message queues",
	 "a queue outlives the call that made it where sandboxes share an IPC namespace (warm podman "
	 "workers): the next call reads it; and queue bytes are counted per host user"},
	{{"ioctl"}, EPERM, SB_DENY_LOW32_EQ, 1, VALUES(TIOCSTI_, TIOCLINUX_),
	 "TIOCSTI and TIOCLINUX (other ioctls stay allowed)",
	 "pushing keystrokes into a terminal: commands typed into the shell that started sagebox"},
	{{"chmod", "fchmod", "creat", "mknod"}, EPERM, SB_DENY_ANY_FLAG, 1, VALUES(S_ISUID_, S_ISGID_),
	 "a mode with the setuid or setgid bit (chmod, or a file created with it)",
	 SETID_STOPS},
	{{"fchmodat", "open", "mknodat"}, EPERM, SB_DENY_ANY_FLAG, 2, VALUES(S_ISUID_, S_ISGID_),
	 "the same, where the mode is the third argument",
	 SETID_STOPS},
	{{"openat"}, EPERM, SB_DENY_ANY_FLAG, 3, VALUES(S_ISUID_, S_ISGID_),
	 "the same, where the mode is the fourth argument",
	 SETID_STOPS},
	{{"openat2", "fchmodat2"}, ENOSYS, SB_DENY_ALWAYS, 0, {0}, 0,
	 "openat2 (its mode is in memory a filter cannot read) and fchmodat2 (fchmodat with flags); ENOSYS, so "
	 "that callers fall back to openat and fchmodat, which the rules above read",
	 "a setuid or setgid file made past the rules above"},
	{{"personality"}, EPERM, SB_DENY_UNLESS_EQ, 0, VALUES(0x0, 0x8, 0x20000, 0x20008, 0xffffffff),
	 "execution domains other than Linux (with PER_LINUX32 or UNAME26) and the query",
	 "READ_IMPLIES_EXEC and MMAP_PAGE_ZERO only help exploits"},
	{{"socket", "socketpair"}, EAFNOSUPPORT, SB_DENY_UNLESS_EQ, 0, VALUES(AF_UNIX_, AF_INET_, AF_INET6_, AF_NETLINK_),
	 "socket families other than local (AF_UNIX), IPv4, IPv6 and netlink (its routing protocol only: "
	 "the next row); the answer of a kernel built without the family",
	 "AF_VSOCK, which no network namespace scopes: on a virtual machine it reaches the hypervisor and "
	 "host services around the proxy and network = none; and the kernel code of every other family "
	 "(packet, Bluetooth, AF_ALG, TIPC, RDS, CAN, XDP, ...), which sandboxed code never needs and "
	 "exploits often start from"},
	{{"socket"}, EPROTONOSUPPORT, SB_DENY_UNLESS_EQ, 2, VALUES(NETLINK_ROUTE_),
	 "netlink protocols other than NETLINK_ROUTE, which getaddrinfo, getifaddrs and ip read the "
	 "sandbox's own interfaces with; the answer of a kernel without the protocol (libaudit takes it "
	 "for no audit)",
	 "netfilter, audit, generic netlink, sock_diag, xfrm and uevent sockets: interfaces to the "
	 "host kernel's configuration and events, a frequent start of local privilege escalations",
	 ONLY_WHERE(0, AF_NETLINK_)},
};

/* Calls newer than the libseccomp of Debian 12: their numbers (the same on
 * every architecture from 424 on). */
static const struct {
	const char *name;
	int nr;
} newer[] = {
	{"open_tree_attr", 467},
	{"fchmodat2", 452},
};

int sb_policy_syscall_nr(const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr != __NR_SCMP_ERROR)
		return nr;
	for (size_t i = 0; i < sizeof newer / sizeof newer[0]; i++)
		if (!strcmp(newer[i].name, name))
			return newer[i].nr;
	return __NR_SCMP_ERROR;
}

const struct sb_policy_rule *sb_policy_rules(size_t *n)
{
	*n = sizeof rules / sizeof rules[0];
	return rules;
}

static const char *when_text(const struct sb_policy_rule *r)
{
	switch (r->when) {
	case SB_DENY_ALWAYS:
		return "always";
	case SB_DENY_ANY_FLAG:
		return "any of the flags is set";
	case SB_DENY_LOW32_EQ:
		return "the low 32 bits equal one of the values";
	case SB_DENY_UNLESS_EQ:
		return "unless equal to one of the values";
	}
	return "?";
}

json_t *sb_policy_json(void)
{
	json_t *rows = json_array();
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		const struct sb_policy_rule *r = &rules[i];
		json_t *names = json_array(), *nrs = json_object(), *vals = json_array();
		for (size_t k = 0; k < SB_POLICY_MAX_NAMES && r->names[k]; k++) {
			int nr = sb_policy_syscall_nr(r->names[k]);
			json_array_append_new(names, json_string(r->names[k]));
			json_object_set_new(nrs, r->names[k], json_integer(nr == __NR_SCMP_ERROR || nr < 0 ? -1 : nr));
		}
		for (size_t k = 0; k < r->nvalues; k++)
			json_array_append_new(vals, json_integer((json_int_t)r->values[k]));
		json_t *row = json_pack("{s:o, s:o, s:s, s:i, s:s}", "names", names, "numbers", nrs, "errno",
					strerrorname_np(r->errnum), "errno_value", r->errnum, "when", when_text(r));
		if (r->when != SB_DENY_ALWAYS) {
			json_object_set_new(row, "arg", json_integer(r->arg));
			json_object_set_new(row, "values", vals);
		} else {
			json_decref(vals);
		}
		if (r->guarded)
			json_object_set_new(row, "only_where", json_pack("{s:i, s:I}", "arg", (int)r->guard_arg, "equals",
									 (json_int_t)r->guard_value));
		json_object_set_new(row, "why", json_string(r->why));
		json_object_set_new(row, "stops", json_string(r->stops));
		json_array_append_new(rows, row);
	}
	return json_pack("{s:o, s:s}", "rules", rows, "foreign_architectures", SB_POLICY_FOREIGN_ARCH);
}
