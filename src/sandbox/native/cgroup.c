/* Memory, pids and CPU limits through a per-sandbox cgroup: cgroup v2 below
 * the delegated cgroup cgroup_base.c found or asked systemd for; cgroup v1
 * (memory, pids, cpu hierarchies) when running as root on a v1/hybrid host;
 * else nothing here and limits.c falls back to rlimits. The sandbox's cgroup
 * is created below the caller's own cgroup, so limits set above us still
 * hold. A limit counts as enforced only once written and read back
 * (put_verified), and read back again once the sandbox's first process
 * has joined the cgroup, by a write the kernel checked (nat_cgroup_verify). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/native/native.h"
#include "util/procstat.h"

static atomic_uint cg_counter;

static int put(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	return nat_write_file(path, val);
}

/* CPU_BURST: the CPU limit is a quota per 100 ms period. A warm call uses
 * both cores for a moment (the job on one; the worker forking the next
 * spare, or the last job's child unmapping its copy of Sage, on the other),
 * and once the period's quota is spent every process of the sandbox stops
 * until the period ends: tens of ms added to a call at random. So a
 * period's unused quota may carry over, up to one period's quota (the
 * kernel's cap; Linux 5.14, cpu.cfs_burst_us / cpu.max.burst; older
 * kernels ignore it): over any time T the sandbox still uses at most
 * cpus * T + one period's quota, and a job that keeps both cores busy is
 * held to `cpus` as before. Best effort: the limit holds without it. */

/* Write a limit and read it back: only a value the kernel holds counts. */
static bool put_verified(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX + 64], line[128];
	if (put(dir, file, val) != 0)
		return false;
	snprintf(path, sizeof path, "%s/%s", dir, file);
	return nat_cg_read_line(path, line, sizeof line) && strcmp(line, val) == 0;
}

/* The CPU quota: cpus cores per 100 ms period, and the burst. */
static bool set_cpu(const char *dir, double cpus, bool v2)
{
	char val[64];
	long quota = (long)(cpus * 100000 + 0.5);
	bool ok;
	if (v2) {
		snprintf(val, sizeof val, "%ld 100000", quota);
		ok = put_verified(dir, "cpu.max", val);
	} else {
		snprintf(val, sizeof val, "%ld", quota);
		ok = put_verified(dir, "cpu.cfs_period_us", "100000") && put_verified(dir, "cpu.cfs_quota_us", val);
	}
	if (ok) {
		snprintf(val, sizeof val, "%ld", quota);
		put(dir, v2 ? "cpu.max.burst" : "cpu.cfs_burst_us", val); /* see CPU_BURST */
	}
	return ok;
}

/* JOB_CGROUP: a warm call needs more than one core for a moment: the job
 * on one, the worker forking the next job's process (a copy of Sage's page
 * tables) and the janitor resetting /tmp on the other. With one quota for
 * the whole sandbox those stopped each other (most 100 ms periods of calls
 * back to back ended throttled). So the quota `cpus` holds each job, in a
 * child cgroup the command moves the job's process into through an fd of
 * its cgroup.procs (nat_cgroup_open_job), and the sandbox as a whole gets
 * NAT_HOUSEKEEPING_CPUS more for the worker's own work. A job cannot leave
 * its cgroup: nothing in the sandbox may write to any other cgroup (no
 * cgroupfs is mounted there, and the only fd is this one). */
static bool make_job(const char *parent, struct nat_cgroup *cg, double cpus, bool v2)
{
	if (snprintf(cg->job, sizeof cg->job, "%s/job", parent) >= (int)sizeof cg->job || mkdir(cg->job, 0755) != 0) {
		cg->job[0] = '\0';
		return false;
	}
	if (set_cpu(cg->job, cpus, v2))
		return true;
	rmdir(cg->job);
	cg->job[0] = '\0';
	return false;
}

static double sandbox_cpus(const struct sb_limits *l, const struct nat_cgroup *cg)
{
	return cg->cpu_per_job ? l->cpus + NAT_HOUSEKEEPING_CPUS : l->cpus;
}

/* cgroup v2 checks a move against the writer's rights over the common
 * ancestor; Linux 5.16 takes those of whoever opened cgroup.procs (us),
 * older kernels those of the sandboxed writer, who has none. */
static bool v2_job_migration_ok(void)
{
	struct utsname u;
	int major = 0, minor = 0;
	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 5 || (major == 5 && minor >= 16);
}

/* SELF_MOVE: the file a process writes "0" to, to move itself into a
 * cgroup while it is one thread. v1: `tasks`, which moves the writing
 * thread alone: the one move that does not take the kernel's global
 * cgroup_threadgroup_rwsem for writing (cgroup_procs_write_start, so in
 * Linux 6.0's source and measured on 6.18; a kernel that took it anyway
 * would be no worse), which through `cgroup.procs` waits for an RCU grace
 * period (~10 ms here) and holds every fork and exit of the machine until
 * the move is done. v2 has no such file for a process that is not
 * threaded: `cgroup.procs`. Only for a process of one thread: `tasks`
 * would leave any other thread behind, outside the limits. */
static const char *self_move_file(enum nat_cg_mode mode)
{
	return mode == NAT_CG_V1 ? "tasks" : "cgroup.procs";
}

/* The file a job's process writes "0" to, to move itself into the jobs'
 * cgroup (SELF_MOVE): the spare is one thread then (a fresh fork, before
 * anything it runs could start one), and what it starts later is born in
 * the cgroup. Through `cgroup.procs` the grace period and the held forks
 * and exits (the worker forking the next spare, the last job's process
 * exiting) slowed root's calls back to back by whole milliseconds at
 * random (docs/WARM.md). */
const char *nat_cgroup_job_file(const struct nat_cgroup *cg)
{
	return self_move_file(cg->mode);
}

int nat_cgroup_open_job(const struct nat_cgroup *cg)
{
	char path[PATH_MAX + 32];
	if (!cg->cpu_per_job ||
	    snprintf(path, sizeof path, "%s/%s", cg->job, nat_cgroup_job_file(cg)) >= (int)sizeof path) {
		errno = ENOENT;
		return -1;
	}
	return open(path, O_WRONLY | O_CLOEXEC);
}

/* The pid namespace a pid is counted in: a cgroup directory is shared by
 * every namespace, a pid is not. 0 when it cannot be read. */
static unsigned long own_pidns(void)
{
	struct stat st;
	return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long)st.st_ino : 0;
}

static void name_new(char *out, size_t n)
{
	snprintf(out, n, "sagebox.%ld.%u.%lu", (long)getpid(), atomic_fetch_add(&cg_counter, 1), own_pidns());
}

/* "sagebox.<pid>.<n>.<pid namespace>", or an older sagebox's
 * "sagebox.<pid>.<n>" (its namespace unknown: *ns is 0). */
static bool parse_name(const char *s, long *pid, unsigned long *ns)
{
	unsigned n;
	int end = 0;
	if (sscanf(s, "sagebox.%ld.%u.%lu%n", pid, &n, ns, &end) == 3 && s[end] == '\0')
		return *pid > 0;
	end = 0;
	*ns = 0;
	return sscanf(s, "sagebox.%ld.%u%n", pid, &n, &end) == 2 && s[end] == '\0' && *pid > 0;
}

/* Remove the empty cgroups of sagebox processes that died without wait()
 * (killed with SIGKILL): "sagebox.<pid>.<n>.<ns>" of our pid namespace
 * whose <pid> is gone. rmdir of
 * a cgroup with processes fails, so nothing running is touched. */
static void gc_stale(const char *base)
{
	DIR *d = opendir(base);
	if (!d)
		return;
	struct dirent *e;
	char path[PATH_MAX];
	static const char *const sub[] = {"/job", "/main", ""}; /* children first */
	unsigned long mine = own_pidns();
	while ((e = readdir(d))) {
		long pid;
		unsigned long ns;
		if (!parse_name(e->d_name, &pid, &ns) || pid == (long)getpid())
			continue;
		/* Another pid namespace's sagebox (a container, fresh-check's root)
		 * shares this directory: its pid means nothing here, and kill()
		 * would find it "gone" and remove its idle job cgroup under it. */
		if (ns != 0 && ns != mine)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (snprintf(path, sizeof path, "%s/%s", base, e->d_name) < (int)sizeof path)
			nat_job_slots_gc(path);
		for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++)
			if (snprintf(path, sizeof path, "%s/%s%s", base, e->d_name, sub[i]) < (int)sizeof path)
				rmdir(path);
	}
	closedir(d);
}

static int v1_create(const struct sb_limits *l, bool per_job, struct nat_cgroup *cg, struct sb_error *err)
{
	char name[64], base[PATH_MAX], val[64];
	name_new(name, sizeof name);
	struct {
		const char *ctrl;
		char *dir;
	} hs[] = {{"memory", cg->mem}, {"pids", cg->pids}, {"cpu", cg->cpu}};
	for (size_t i = 0; i < 3; i++) {
		hs[i].dir[0] = '\0';
		if (!nat_cg_own_dir(hs[i].ctrl, base, sizeof base))
			continue;
		gc_stale(base);
		if (snprintf(hs[i].dir, PATH_MAX, "%s/%s", base, name) >= PATH_MAX ||
		    mkdir(hs[i].dir, 0755) != 0) {
			hs[i].dir[0] = '\0';
			continue;
		}
	}
	if (cg->mem[0]) {
		snprintf(val, sizeof val, "%llu", (unsigned long long)l->memory_bytes);
		cg->mem_limited = put_verified(cg->mem, "memory.limit_in_bytes", val);
		/* memory+swap too, or the limit is only on RAM and the rest swaps. */
		cg->memsw_limited = put_verified(cg->mem, "memory.memsw.limit_in_bytes", val);
	}
	if (cg->pids[0]) {
		snprintf(val, sizeof val, "%u", l->pids);
		cg->pids_limited = put_verified(cg->pids, "pids.max", val);
	}
	if (cg->cpu[0]) {
		/* The child first: its quota may not exceed its parent's. */
		cg->cpu_per_job = per_job && make_job(cg->cpu, cg, l->cpus, false);
		cg->cpu_limited = set_cpu(cg->cpu, sandbox_cpus(l, cg), false);
	}
	if (cg->mem[0] && !cg->mem_limited) {
		sb_fail_errno(err, "cannot set the memory limit in %s", cg->mem);
		nat_cgroup_remove(cg);
		return -1;
	}
	cg->mode = NAT_CG_V1;
	return 0;
}

static pthread_mutex_t v2_lock = PTHREAD_MUTEX_INITIALIZER;

static bool v2_enabled(const char *dir)
{
	char path[PATH_MAX + 32], line[256];
	snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
	return nat_cg_read_line(path, line, sizeof line) && nat_cg_has_token(line, "memory") &&
	       nat_cg_has_token(line, "pids");
}

/* Whether pid is this process or one it started (its parents, read in
 * /proc, lead to us). */
static bool ours(pid_t pid)
{
	pid_t me = getpid();
	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		unsigned long long ppid;
		if (pid == me)
			return true;
		if (sb_proc_stat_fields(pid, SB_STAT_PPID, 1, &ppid) != 0)
			return false;
		pid = (pid_t)ppid;
	}
	return false;
}

/* Move this process, and every process in dir that it started, into leaf.
 * A child forked before the first sandbox (the driver's code cache made at
 * start, a warm worker made then) is still in dir, and while it runs the
 * kernel refuses the controllers; each of them is ours and unlimited
 * there, so it loses nothing in the leaf. Other processes in dir (a shell
 * that shares a delegated scope with us) stay where they are. 0, or -1
 * when this process could not be moved. */
static int move_ours(const char *dir, const char *leaf)
{
	char path[PATH_MAX + 32], line[32];
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	bool moved_self = false;
	while (fgets(line, sizeof line, f)) {
		long pid = strtol(line, NULL, 10);
		if (pid <= 0 || !ours((pid_t)pid))
			continue;
		line[strcspn(line, "\n")] = '\0';
		/* one that ended meanwhile is no longer in the way */
		if (put(leaf, "cgroup.procs", line) == 0 && pid == (long)getpid())
			moved_self = true;
	}
	fclose(f);
	if (!moved_self) {
		snprintf(line, sizeof line, "%ld", (long)getpid());
		if (put(leaf, "cgroup.procs", line) != 0)
			return -1;
	}
	return 0;
}

/* Enable the controllers for our children, and check on every sandbox
 * that they still are. The "no internal processes" rule refuses that while
 * processes are in the cgroup itself; then move this process and those it
 * started into a leaf first, as crun and nsjail do (once per process: the
 * base stays the cgroup we started in, or systemd's scope, never our
 * leaf). A few rounds: a child forked while we moved the others is born
 * where its parent was. */
static int v2_enable(const char *dir)
{
	const char *want = "+memory +pids +cpu";
	if (v2_enabled(dir))
		return 0;
	if (put(dir, "cgroup.subtree_control", want) == 0 || put(dir, "cgroup.subtree_control", "+memory +pids") == 0)
		return 0;
	if (errno != EBUSY)
		return -1;
	char leaf[PATH_MAX + 32];
	snprintf(leaf, sizeof leaf, "%s/sagebox-server", dir);
	if (mkdir(leaf, 0755) != 0 && errno != EEXIST)
		return -1;
	for (int round = 0; round < 3; round++) {
		if (move_ours(dir, leaf) != 0)
			return -1;
		if (put(dir, "cgroup.subtree_control", want) == 0 ||
		    put(dir, "cgroup.subtree_control", "+memory +pids") == 0)
			return 0;
		if (errno != EBUSY)
			return -1;
	}
	return -1;
}

static int v2_create(const char *base, const struct sb_limits *l, bool per_job, struct nat_cgroup *cg,
		     struct sb_error *err)
{
	char name[64], val[64];
	pthread_mutex_lock(&v2_lock);
	int rc = v2_enable(base);
	pthread_mutex_unlock(&v2_lock);
	if (rc != 0)
		return sb_fail_errno(err, "cannot enable the memory/pids controllers in %s/cgroup.subtree_control",
				     base);
	gc_stale(base);
	name_new(name, sizeof name);
	if (snprintf(cg->mem, sizeof cg->mem, "%s/%s", base, name) >= (int)sizeof cg->mem ||
	    mkdir(cg->mem, 0755) != 0)
		return sb_fail_errno(err, "cannot create the cgroup %s", cg->mem);
	cg->mode = NAT_CG_V2;
	snprintf(val, sizeof val, "%llu", (unsigned long long)l->memory_bytes);
	cg->mem_limited = put_verified(cg->mem, "memory.max", val);
	/* No swap: the memory limit must be the limit. */
	cg->memsw_limited = put_verified(cg->mem, "memory.swap.max", "0");
	snprintf(val, sizeof val, "%u", l->pids);
	cg->pids_limited = put_verified(cg->mem, "pids.max", val);
	/* A job cgroup needs the cpu controller for our children, and then
	 * (no internal processes) a leaf of its own for the rest. */
	if (per_job && v2_job_migration_ok() && put(cg->mem, "cgroup.subtree_control", "+cpu") == 0) {
		if (snprintf(cg->leaf, sizeof cg->leaf, "%s/main", cg->mem) < (int)sizeof cg->leaf &&
		    mkdir(cg->leaf, 0755) == 0) {
			cg->cpu_per_job = make_job(cg->mem, cg, l->cpus, true);
		} else {
			cg->leaf[0] = '\0';
			put(cg->mem, "cgroup.subtree_control", "-cpu"); /* processes may join it again */
		}
	}
	cg->cpu_limited = set_cpu(cg->mem, sandbox_cpus(l, cg), true);
	if (!cg->cpu_limited) {
		char path[PATH_MAX + 32], line[256];
		snprintf(path, sizeof path, "%s/cgroup.controllers", base);
		if (!nat_cg_read_line(path, line, sizeof line))
			line[0] = '\0';
		snprintf(cg->note, sizeof cg->note, "the cpu controller is not delegated to %s (it has: %s)", base,
			 line[0] ? line : "none");
	}
	if (!cg->mem_limited || !cg->pids_limited) {
		sb_fail_errno(err, "cannot set the limits in %s", cg->mem);
		nat_cgroup_remove(cg);
		return -1;
	}
	return 0;
}

int nat_cgroup_create(const struct sb_limits *l, bool per_job, struct nat_cgroup *cg, struct sb_error *err)
{
	const struct nat_cg_base *b = nat_cgroup_base();
	memset(cg, 0, sizeof *cg);
	if (b->mode == NAT_CG_V2)
		return v2_create(b->dir, l, per_job, cg, err);
	if (b->mode == NAT_CG_V1)
		return v1_create(l, per_job, cg, err);
	snprintf(cg->note, sizeof cg->note, "%s", b->why);
	cg->mode = NAT_CG_NONE;
	return 0;
}

int nat_cgroup_trial(const struct sb_limits *l, struct nat_cgroup *cg, struct sb_error *err)
{
	int rc = nat_cgroup_create(l, true, cg, err);
	if (rc == 0)
		nat_cgroup_remove(cg);
	return rc;
}

int nat_cgroup_join_self(const struct nat_cgroup *cg)
{
	const char *dirs[] = {cg->leaf[0] ? cg->leaf : cg->mem, cg->pids, cg->cpu};
	char path[PATH_MAX + 16];
	for (size_t i = 0; i < 3; i++) {
		if (cg->mode == NAT_CG_NONE || !dirs[i][0])
			continue;
		/* memcpy, not snprintf: AS-safe in a fork of a threaded host. */
		const char *file = self_move_file(cg->mode);
		size_t n = strlen(dirs[i]), f = strlen(file);
		if (n + 1 + f + 1 > sizeof path)
			return -1;
		memcpy(path, dirs[i], n);
		path[n] = '/';
		memcpy(path + n + 1, file, f + 1);
		/* "0": the writer itself, a fresh fork of one thread (SELF_MOVE). */
		if (nat_write_file(path, "0") != 0)
			return -1;
	}
	return 0;
}

void nat_cgroup_kill(const struct nat_cgroup *cg)
{
	if (cg->mode == NAT_CG_V2 && cg->mem[0])
		put(cg->mem, "cgroup.kill", "1");
}

long nat_cgroup_oom_kills(const struct nat_cgroup *cg)
{
	if ((cg->mode != NAT_CG_V2 && cg->mode != NAT_CG_V1) || !cg->mem[0])
		return -1;
	char path[PATH_MAX + 32], line[128];
	snprintf(path, sizeof path, "%s/%s", cg->mem, cg->mode == NAT_CG_V2 ? "memory.events" : "memory.oom_control");
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long n = -1;
	while (n < 0 && fgets(line, sizeof line, f))
		if (sscanf(line, "oom_kill %ld", &n) != 1)
			n = -1;
	fclose(f);
	return n;
}

void nat_cgroup_remove(struct nat_cgroup *cg)
{
	nat_job_slots_remove(cg);
	char *dirs[] = {cg->job, cg->leaf, cg->mem, cg->pids, cg->cpu}; /* children first */
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		if (!dirs[i][0])
			continue;
		/* The last processes may still be leaving: retry EBUSY for ~2 s. */
		for (int tries = 0; tries < 200; tries++) {
			if (rmdir(dirs[i]) == 0 || errno == ENOENT)
				break;
			if (errno != EBUSY)
				break;
			struct timespec ts = {0, 10 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		dirs[i][0] = '\0';
	}
}

static bool still(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX + 64], line[128];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	return nat_cg_read_line(path, line, sizeof line) && strcmp(line, val) == 0;
}

int nat_cgroup_verify(const struct nat_cgroup *cg, const struct sb_limits *l, struct sb_error *err)
{
	char val[64];
	bool v2 = cg->mode == NAT_CG_V2;
	if (cg->mode == NAT_CG_NONE)
		return 0;
	const struct {
		bool claimed;
		const char *ctrl, *dir, *file;
	} rows[] = {
		{cg->mem_limited, "memory", cg->mem, v2 ? "memory.max" : "memory.limit_in_bytes"},
		{cg->pids_limited, "pids", v2 ? cg->mem : cg->pids, "pids.max"},
		{cg->cpu_limited, "cpu", v2 ? cg->mem : cg->cpu, v2 ? "cpu.max" : "cpu.cfs_quota_us"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		if (!rows[i].claimed)
			continue;
		if (i == 0)
			snprintf(val, sizeof val, "%llu", (unsigned long long)l->memory_bytes);
		else if (i == 1)
			snprintf(val, sizeof val, "%u", l->pids);
		else
			snprintf(val, sizeof val, v2 ? "%ld 100000" : "%ld", (long)(sandbox_cpus(l, cg) * 100000 + 0.5));
		if (!still(rows[i].dir, rows[i].file, val))
			return sb_fail(err, "the sandbox's %s limit is gone from %s/%s since it was set: something else "
					    "manages this cgroup", rows[i].ctrl, rows[i].dir, rows[i].file);
	}
	return 0;
}
