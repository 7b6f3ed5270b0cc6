/* The native backend's internals: one sandbox is three processes.
 *
 *   caller (multi-threaded server)
 *     └─ outer   host side, single-threaded: joins the cgroup, drops host
 *        │       root, creates the user namespace and maps one uid, then
 *        │       the other namespaces; relays kill requests; reaps init.
 *        └─ init pid 1 of the new pid namespace: builds the root filesystem,
 *           │    brings up loopback, forks the command, reaps zombies and
 *           │    reports the command's status; when it exits the kernel
 *           │    kills everything left in the namespace.
 *           └─ command  setsid, rlimits, no capabilities, no_new_privs,
 *                Landlock, seccomp (last), execve.
 *
 * Everything the children need is computed by the caller before fork (a
 * `struct nat_plan`), so the children make raw system calls only: no
 * malloc-heavy library calls, no NSS, no locks taken after fork. Each child
 * reports failures (and, from the command, the verified enforcement) to the
 * caller over a CLOEXEC pipe as fixed-size records.
 *
 * Lifetime: init and the command use PR_SET_PDEATHSIG(SIGKILL) towards
 * their single-threaded parents. The outer process does NOT: the kernel
 * sends the parent-death signal when the *thread* that forked exits, and a
 * server may spawn from a short-lived thread (warm-pool prestart). Instead
 * it holds a socket to the caller (NAT_FD_CTL) and treats EOF (the caller
 * process is gone) like a kill request. */
#ifndef SAGEBOX_NATIVE_H
#define SAGEBOX_NATIVE_H

#include <limits.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdnoreturn.h>
#include <sys/types.h>

#include "core/limits.h"
#include "sandbox/sandbox.h"
#include "util/error.h"

/* The one id the sandbox sees itself as. */
#define NAT_UID_INSIDE 1000
#define NAT_GID_INSIDE 1000
#define NAT_HOSTNAME SB_SANDBOX_HOSTNAME

/* Fixed descriptor slots in the outer/init/command processes. */
#define NAT_FD_REPORT 3 /* records to the caller; CLOEXEC: EOF at execve */
#define NAT_FD_STATUS 4 /* init -> caller: the command's exit status */
#define NAT_FD_CTL 5    /* caller <-> outer: kill requests, caller liveness */
#define NAT_FD_JOB_CGROUP 6 /* the jobs' cgroup.procs (see nat_cgroup.job), to the command */
/* In the command: NAT_FD_JOB_CGROUP is moved here, and the environment
 * names it (NAT_JOB_CGROUP_ENV), for the worker to put each job's process in. */
#define NAT_CMD_FD_JOB_CGROUP 4
/* A session's job cgroups (job_slots.c): the parent's cgroup.procs, then
 * one per job slot, on these fds in outer and init, and from
 * NAT_CMD_FD_JOB_SLOTS on in the command (NAT_JOB_SLOTS_ENV names them). */
#define NAT_FD_JOB_SLOTS 7
#define NAT_CMD_FD_JOB_SLOTS 5
#define NAT_JOB_SLOTS_MAX 33
#define NAT_JOB_SLOTS_ENV "SAGEBOX_JOB_SLOTS_FD="
#define NAT_STR_(x) #x
#define NAT_STR(x) NAT_STR_(x)
#define NAT_JOB_CGROUP_ENV "SAGEBOX_JOB_CGROUP_FD=" NAT_STR(NAT_CMD_FD_JOB_CGROUP)
/* With a cgroup per job, the CPU the sandbox's own housekeeping (the worker
 * forking the next job's process, the janitor resetting /tmp) may use on top
 * of the jobs' `cpus`: the sandbox as a whole is held to cpus + this. */
#define NAT_HOUSEKEEPING_CPUS 1.0

/* Directories of a Sage installed outside the system directories (install.c). */
#define NAT_INSTALLS_MAX 4

/* ---- the instance (spawn.c opens it): the settings, copied ---- */
struct nat_self {
	struct sb_limits limits;  /* a job's defaults, for status */
	char sandbox_user[64];    /* started as root: the host user to drop to */
	char shares[SB_SHARES_MAX][PATH_MAX]; /* bound read-only at /data/NAME */
	unsigned n_shares;
	char installs[NAT_INSTALLS_MAX][PATH_MAX]; /* Sage outside /usr: bound at the same path */
	unsigned n_installs;
	char packages[PATH_MAX];  /* the user's packages: bound at SB_PACKAGES_MOUNT; "": none */
	/* "PATH=" their bin dirs (nat_add_path) then the usual PATH, or "" */
	char path_env[2 * PATH_MAX + 64];
	struct {
		char name[16];
		char path[PATH_MAX];
	} commands[4];            /* executables status checks, name "" at the end */
};

/* ---- the report channel (report.c) ---- */
enum nat_msg_kind { NAT_MSG_ERROR = 1, NAT_MSG_READY = 2, NAT_MSG_EXIT = 3 };

struct nat_ready {
	int landlock_abi;      /* ABI of the ruleset that was applied, 0: none */
	bool landlock_net;     /* TCP bind/connect handled (ABI >= 4) */
	bool landlock_scoped;  /* signals + abstract unix sockets scoped (ABI >= 6) */
	bool seccomp;          /* PR_GET_SECCOMP == 2 after loading */
	bool no_new_privs;     /* PR_GET_NO_NEW_PRIVS == 1 */
	bool caps_none;        /* capget: effective/permitted/inheritable all 0 */
	bool bounding_empty;   /* PR_CAPBSET_READ is 0 for every capability */
	bool loopback_up;      /* lo is IFF_UP in the new net namespace */
	bool setsid;
	bool rlimit_data;      /* memory fallback applied */
	bool rlimit_nproc;     /* pids fallback applied */
	int uid_inside;
	int gid_inside;
	long host_uid;         /* the unprivileged host uid outside (uid_map) */
	uint32_t user_resources; /* bit i: row i of sb_user_resources() applied */
};

struct nat_msg {
	int kind;
	int errnum;
	char stage[32];
	char msg[1024];
	char hint[1024];
	struct nat_ready ready;
	int exit_code; /* NAT_MSG_EXIT */
	int signal;
};

_Static_assert(sizeof(struct nat_msg) <= 4096, "a record must be written atomically (PIPE_BUF)");

/* Write one record (a single write of < PIPE_BUF bytes: atomic). */
void nat_report(int fd, const struct nat_msg *m);
/* Report an error from a child and _exit(SB_EXIT_SANDBOX). errno-style detail appended
 * when errnum != 0. Async-signal-safe apart from vsnprintf into a stack
 * buffer. */
noreturn void nat_child_fail(const char *stage, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
noreturn void nat_child_fail_hint(const char *stage, int errnum, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- cgroups (cgroup_base.c, cgroup.c, systemd_scope.c) ---- */
enum nat_cg_mode { NAT_CG_NONE, NAT_CG_V1, NAT_CG_V2 };

/* Where this process's sandboxes' cgroups go (cgroup_base.c), decided
 * once: v2 below `dir`, which is ours (`how` says why: a delegated unit, a
 * scope systemd made for us, no systemd at all); v1 as root; or none, and
 * `why`. */
struct nat_cg_base {
	enum nat_cg_mode mode;
	char dir[PATH_MAX];
	char how[256];
	char why[768];
	bool scope; /* dir is a scope systemd made for this process */
};
const struct nat_cg_base *nat_cgroup_base(void);
bool nat_cg_has_token(const char *list, const char *tok);
/* The first line of a file, without its newline; false if unreadable. */
bool nat_cg_read_line(const char *path, char *buf, size_t n);
/* The systemd unit that holds the cgroup path (relative to the hierarchy's
 * root): its deepest component named like a service or scope; *unit_end
 * is where the unit's own directory ends in path; *user_manager: the
 * unit is the user manager's (below a user@UID.service). false: none. */
bool nat_cgroup_unit_of(const char *path, const char **name, size_t *name_len, size_t *unit_end,
			bool *user_manager);
/* Our own cgroup's directory in the v1 hierarchy of ctrl (NULL: v2). */
bool nat_cg_own_dir(const char *ctrl, char *out, size_t n);
/* systemd_scope.c: whether the unit (of the user's manager or the
 * system's) has Delegate=yes: 1, 0, -1 (cannot ask; why says why). */
int nat_systemd_unit_delegated(bool user_manager, const char *unit, char *why, size_t wn);
/* A transient scope with Delegate=yes holding this process, from the
 * user's manager or (user_manager false) the system's; its name in unit.
 * 0, or -1 and why. */
int nat_systemd_scope(bool user_manager, char *unit, size_t un, char *why, size_t wn);

struct nat_cgroup {
	enum nat_cg_mode mode;
	char mem[PATH_MAX];  /* v1: memory dir; v2: the one dir */
	char pids[PATH_MAX]; /* v1 only */
	char cpu[PATH_MAX];  /* v1 only */
	/* cpu_per_job: the CPU quota `cpus` is on this child cgroup (v1: of
	 * cpu; v2: of the one dir), which the command moves each job's process
	 * into; the sandbox's cgroup has cpus + NAT_HOUSEKEEPING_CPUS. */
	char job[PATH_MAX];
	char leaf[PATH_MAX]; /* v2 with a job cgroup: the rest of the sandbox's own leaf */
	bool cpu_per_job;
	unsigned n_job_slots; /* job-0 .. job-<n-1> below it (job_slots.c) */
	bool mem_limited, memsw_limited, pids_limited, cpu_limited;
	char note[768];      /* why no cgroup, or a caveat */
};

/* status: the limits l would get here, tried for real: a sandbox's cgroup
 * made (the controllers enabled, each limit written and read back) and
 * removed again; cg says what held. -1 (err) as nat_cgroup_create. */
int nat_cgroup_trial(const struct sb_limits *l, struct nat_cgroup *cg, struct sb_error *err);
/* After the sandbox started (its first process joined the cgroups): every
 * limit cg claims still reads as written. -1 + err. */
int nat_cgroup_verify(const struct nat_cgroup *cg, const struct sb_limits *l, struct sb_error *err);
/* Create a per-sandbox cgroup with the limits; cg->mode NAT_CG_NONE (and
 * cg->note says why) when none can be used. per_job: the CPU quota on a
 * child cgroup for the jobs (cg->cpu_per_job says whether it could be).
 * Returns -1 only on a real failure after a mode was chosen (err filled). */
int nat_cgroup_create(const struct sb_limits *l, bool per_job, struct nat_cgroup *cg, struct sb_error *err);
/* The jobs' cgroup's `tasks` (v1) or `cgroup.procs` (v2), opened for
 * writing by the caller: whoever holds it may move a thread (v1) or a
 * process (v2) it can see into that cgroup (open-time credentials, Linux
 * >= 5.16 on v2). -1 + errno. */
int nat_cgroup_open_job(const struct nat_cgroup *cg);
/* The file of the jobs' cgroup that fd is (v1 `tasks`, v2 `cgroup.procs`). */
const char *nat_cgroup_job_file(const struct nat_cgroup *cg);
/* In the outer child, before dropping root: move itself in. AS-safe. */
int nat_cgroup_join_self(const struct nat_cgroup *cg);
/* cgroup.kill (v2) where available. */
void nat_cgroup_kill(const struct nat_cgroup *cg);
/* The memory cgroup's oom_kill counter (v2 memory.events, v1
 * memory.oom_control); -1 without one or when it cannot be read. */
long nat_cgroup_oom_kills(const struct nat_cgroup *cg);
/* Remove the directories (after every process has exited). */
void nat_cgroup_remove(struct nat_cgroup *cg);
/* job_slots.c: make n job cgroups below the sandbox's (none for a warm
 * worker's) and open fds[0] (the parent's cgroup.procs, write) and
 * fds[1..n] (each slot's, write). -1 + errno, nothing left. */
int nat_job_slots_open(struct nat_cgroup *cg, unsigned n, int *fds);
void nat_job_slots_remove(struct nat_cgroup *cg);
/* Remove the job-<i> cgroups of a stale sandbox's cgroup dir. */
void nat_job_slots_gc(const char *dir);

/* ---- what the children need (spawn.c prepares it) ---- */
struct nat_plan {
	const char *const *argv;
	const char *const *envp;
	struct sb_limits limits;
	unsigned lifetime_s;       /* outer kills init at this age; 0: no bound */
	uint64_t workspace_bytes;  /* a session: a tmpfs at /work, the cwd; 0: none */
	const char (*shares)[PATH_MAX]; /* host directories for /data/NAME (nat_self's) */
	unsigned n_shares;
	const char (*installs)[PATH_MAX]; /* bound read-only at the same path (nat_self's) */
	unsigned n_installs;
	const char *net_dir;       /* network: the proxy socket's host dir, for SB_NET_MOUNT; NULL: none */
	const char *packages;      /* host dir bound read-only at SB_PACKAGES_MOUNT; "": none */
	const char *driver_code;   /* host file bound read-only at SB_DRIVER_CODE_MOUNT; NULL: none */
	const char *project_dir;   /* host dir bound read-write at SB_PROJECT_MOUNT; NULL: none */
	bool project_exec;         /* ... without noexec */
	pid_t caller_pid;
	bool drop_root;            /* started as root: become host_uid first */
	uid_t host_uid;            /* unprivileged uid outside (after the drop) */
	gid_t host_gid;
	struct nat_cgroup cg;
	bool rlimit_mem;           /* no cgroup memory limit: use RLIMIT_DATA */
	bool rlimit_pids;          /* no cgroup pids limit: use RLIMIT_NPROC */
	const struct sock_fprog *seccomp;
	int landlock_abi;          /* best ABI the kernel offers (probed) */
	/* child ends, moved to 0,1,2 and NAT_FD_* in the outer child */
	int in_fd, out_fd, err_fd, report_fd, status_fd, ctl_fd;
	int job_cg_fd;             /* -1: no job cgroup; NAT_FD_JOB_CGROUP in the children */
	int job_slot_fds[NAT_JOB_SLOTS_MAX]; /* n_job_slot_fds of them (job_slots.c) */
	unsigned n_job_slot_fds;
	/* filled in outer and init, inherited by the command */
	uint32_t user_resources;   /* rows of sb_user_resources() applied */
	bool loopback_up;
};

/* ---- the three processes ---- */
noreturn void nat_outer_main(struct nat_plan *p);          /* outer.c */
noreturn void nat_init_main(struct nat_plan *p, int alive_fd); /* init.c */
noreturn void nat_command_main(struct nat_plan *p);        /* command.c */

/* ---- steps (one file each) ---- */
/* userns.c */
int nat_userns_enter(uid_t host_uid, gid_t host_gid, const char **step); /* -1 + errno */
/* Why user namespaces cannot be created here, from the sysctls; returns
 * false when nothing explains it. Not async-signal-safe (stdio): caller only. */
bool nat_userns_diagnose(int errnum, char *msg, size_t msgn, char *hint, size_t hintn);
/* Fork a probe that tries the namespaces as spawn would; 0 ok, else errno. */
int nat_userns_probe(uid_t uid, gid_t gid, bool drop_root, const char **step);

/* mounts.c, dev.c, etc.c: the new root, built in init. die on error. */
void nat_build_root(const struct nat_plan *p);
/* session_mounts.c: steps of nat_build_root for sessions and shares. */
void nat_open_shares(const struct nat_plan *p, int fds[SB_SHARES_MAX]);
/* Each of dirs opened O_PATH into fds (before the root tmpfs covers them);
 * a failure ends init with "cannot open WHAT DIR" and hint. */
void nat_open_dirs(const char (*dirs)[PATH_MAX], unsigned n, int *fds, const char *what, const char *hint);
void nat_mount_shares(const struct nat_plan *p, const int fds[SB_SHARES_MAX], const char *newroot);
void nat_mount_workspace(const struct nat_plan *p, const char *newroot);
/* The project folder (p->project_dir) and its .git opened before the root
 * tmpfs (fds[0], fds[1]; -1: none), then bound at SB_PROJECT_MOUNT. */
void nat_open_project(const struct nat_plan *p, int fds[2]);
void nat_mount_project(const struct nat_plan *p, const int fds[2], const char *newroot);
/* network: p->net_dir opened before the root tmpfs (-1: none), then bound
 * read-only at SB_NET_MOUNT. */
int nat_open_net(const struct nat_plan *p);
void nat_mount_net(int fd, const char *newroot);
/* install.c: a Sage outside /usr; the backend's bind_install operation. */
int nat_bind_install(void *self, const char *const *paths, bool required, json_t *said, struct sb_error *err);
int nat_add_path(void *self, const char *dir);
void nat_open_installs(const struct nat_plan *p, int fds[NAT_INSTALLS_MAX]);
void nat_mount_installs(const struct nat_plan *p, const int fds[NAT_INSTALLS_MAX], const char *newroot);
/* packages.c: the user's package presets at SB_PACKAGES_MOUNT (-1: none). */
int nat_open_packages(const struct nat_plan *p);
void nat_mount_packages(int fd, const char *newroot);
/* driver_code.c: the driver's precompiled code at SB_DRIVER_CODE_MOUNT
 * (-1: none; best effort, never fails the sandbox). */
int nat_open_driver_code(const struct nat_plan *p);
void nat_mount_driver_code(int fd, const char *newroot);
void nat_make_dev(const char *dev, const struct sb_limits *l);
void nat_make_etc(const char *etc);
/* bind.c: the directories leading to path (not path itself), mode 0755. */
void nat_mkdirs_for(const char *path);
/* bind.c: a read-only bind (ro,nosuid,nodev on every submount), or a
 * device node's (keeps dev; nosuid, noexec). */
void nat_bind(const char *src, const char *dst, bool writable_dev);
/* fd (an O_PATH directory or file opened before the root tmpfs covered
 * the host's tree) bound read-only at newroot/at, its parents and mount
 * point made; fd is closed. */
void nat_bind_fd_at(int fd, const char *newroot, const char *at);
void nat_remount_ro_recursive(const char *path);

/* net.c */
int nat_loopback_up(void);

/* caps.c */
int nat_drop_caps(void);
bool nat_caps_none(void);
bool nat_bounding_empty(void);

/* limits.c */
int nat_apply_rlimits(const struct nat_plan *p);
/* user_resources.c: the namespace rows; -1 + errno and *failed on error. */
int nat_limit_user_resources(uint32_t *applied, const char **failed);

/* landlock.c */
int nat_landlock_abi(void); /* 0 when unsupported */
/* Apply at ABI min(abi, what we know), with read/execute on p's
 * installation directories too; returns the applied ABI, -1 + errno. */
int nat_landlock_apply(int abi, const struct nat_plan *p);

/* seccomp_filter.c */
/* The compiled filter (built once, shared by every spawn). NULL + err. */
const struct sock_fprog *nat_seccomp_program(struct sb_error *err);
int nat_seccomp_load(const struct sock_fprog *prog); /* -1 + errno */

/* status.c */
json_t *nat_status(void *self);

/* enforced.c */
json_t *nat_enforced_json(const struct nat_plan *p, const struct nat_ready *r);

/* small helpers (report.c) */
int nat_write_file(const char *path, const char *data); /* -1 + errno */
void nat_fmt_u(char *buf, size_t n, unsigned long long v);

#endif
