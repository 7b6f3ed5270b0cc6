/* Landlock: a second, independent wall around the filesystem and the
 * network, enforced by the kernel even if a mount were ever wrong. Uses the
 * best ABI the kernel offers; constants newer than the build's headers are
 * defined here. */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/native/native.h"

#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_REMOVE_DIR (1ULL << 4)
#define FS_REMOVE_FILE (1ULL << 5)
#define FS_MAKE_CHAR (1ULL << 6)
#define FS_MAKE_DIR (1ULL << 7)
#define FS_MAKE_REG (1ULL << 8)
#define FS_MAKE_SOCK (1ULL << 9)
#define FS_MAKE_FIFO (1ULL << 10)
#define FS_MAKE_BLOCK (1ULL << 11)
#define FS_MAKE_SYM (1ULL << 12)
#define FS_REFER (1ULL << 13)    /* ABI 2 */
#define FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define NET_BIND_TCP (1ULL << 0)  /* ABI 4 */
#define NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define SCOPE_SIGNAL (1ULL << 1)
#define RULE_PATH_BENEATH 1
#define RULE_NET_PORT 2
#define NAT_LANDLOCK_MAX_ABI 7

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port {
	uint64_t allowed_access;
	uint64_t port;
} __attribute__((packed));

int nat_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : (int)abi;
}

static uint64_t fs_for_abi(int abi)
{
	uint64_t a = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR | FS_REMOVE_FILE |
		     FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK |
		     FS_MAKE_SYM;
	if (abi >= 2)
		a |= FS_REFER;
	if (abi >= 3)
		a |= FS_TRUNCATE;
	if (abi >= 5)
		a |= FS_IOCTL_DEV;
	return a;
}

static int add_rule(int ruleset, const char *path, uint64_t access, uint64_t handled)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	struct ll_path_beneath pb = {.allowed_access = access & handled, .parent_fd = fd};
	long rc = syscall(SYS_landlock_add_rule, ruleset, RULE_PATH_BENEATH, &pb, 0);
	int saved = errno;
	close(fd);
	errno = saved;
	return rc == 0 ? 0 : -1;
}

int nat_landlock_apply(int abi, const struct nat_plan *p)
{
	if (abi <= 0) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (abi > NAT_LANDLOCK_MAX_ABI)
		abi = NAT_LANDLOCK_MAX_ABI;
	uint64_t handled = fs_for_abi(abi);
	struct ll_ruleset_attr attr = {.handled_access_fs = handled};
	size_t size = sizeof attr.handled_access_fs;
	if (abi >= 4) {
		/* No TCP bind or connect at all (no rule grants any port):
		 * even loopback listeners inside cannot be reached or made. */
		attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
		size = offsetof(struct ll_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		/* Signals and abstract unix sockets only within the sandbox's
		 * own domain: no signalling init or a host process, no talking
		 * to a host daemon's abstract socket. */
		attr.scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL;
		size = sizeof attr;
	}
	int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0)
		return -1;
	const uint64_t rx = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
	const uint64_t rw_tree = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR |
				 FS_REMOVE_FILE | FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO |
				 FS_MAKE_SYM | FS_REFER | FS_TRUNCATE;
	struct {
		const char *path;
		uint64_t access;
	} rules[] = {
		/* listing / is harmless: it is our own tmpfs */
		{"/", FS_READ_DIR},
		/* the system: read and execute, never write */
		{"/usr", rx},
		{"/etc", FS_READ_FILE | FS_READ_DIR},
		{"/proc", FS_READ_FILE | FS_READ_DIR | FS_WRITE_FILE},
		/* devices: read/write the five nodes and ptys, tty ioctls */
		{"/dev", FS_READ_FILE | FS_READ_DIR | FS_WRITE_FILE | FS_IOCTL_DEV},
		{"/dev/shm", rw_tree},
		/* the writable tmpfs. Execute is allowed: the interpreter can make
		 * any system call anyway, and `./script.sh` should work. */
		{"/tmp", rw_tree},
		/* a session's workspace (with a project folder beneath it, no
		 * links, FIFOs or sockets there: rights granted on /work hold
		 * for everything below it), the project folder (files and
		 * directories only: nothing that makes the host follow a link
		 * or open something other than a file when the user opens what
		 * the code left there), and the shared host directories: read
		 * only (absent paths are skipped) */
		{SB_SANDBOX_WORKSPACE, p->project_dir ? rw_tree & ~(FS_MAKE_SYM | FS_MAKE_FIFO | FS_MAKE_SOCK) : rw_tree},
		{p->project_dir ? SB_PROJECT_MOUNT : "/nonexistent",
		 FS_READ_FILE | FS_READ_DIR | FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR | FS_MAKE_REG |
			 FS_REFER | FS_TRUNCATE | (p->project_exec ? FS_EXECUTE : 0)},
		{SB_SHARE_MOUNT, FS_READ_FILE | FS_READ_DIR},
		/* the user's package presets: read, and execute (their scripts) */
		{SB_PACKAGES_MOUNT, rx},
		/* the driver's precompiled code (one file): read only */
		{SB_DRIVER_CODE_MOUNT, FS_READ_FILE},
	};
	for (size_t i = 0; i < sizeof rules / sizeof rules[0] + p->n_installs; i++) {
		/* after the table: a Sage outside /usr, read and execute as /usr */
		bool inst = i >= sizeof rules / sizeof rules[0];
		const char *path = inst ? p->installs[i - sizeof rules / sizeof rules[0]] : rules[i].path;
		if (add_rule(rs, path, inst ? rx : rules[i].access, handled) != 0) {
			int saved = errno;
			close(rs);
			errno = saved;
			return -1;
		}
	}
	/* network set: the one port of the relay to the proxy (loopback is
	 * the only interface): the driver's relay listens on it, the code
	 * connects to it. Nothing else, so the TCP wall above stays. */
	struct ll_net_port np = {.allowed_access = NET_BIND_TCP | NET_CONNECT_TCP, .port = SB_NET_PORT};
	if (abi >= 4 && p->net_dir && syscall(SYS_landlock_add_rule, rs, RULE_NET_PORT, &np, 0) != 0) {
		int saved = errno;
		close(rs);
		errno = saved;
		return -1;
	}
	/* restrict_self needs no_new_privs (set before) or CAP_SYS_ADMIN. */
	long rc = syscall(SYS_landlock_restrict_self, rs, 0);
	int saved = errno;
	close(rs);
	errno = saved;
	return rc == 0 ? abi : -1;
}
