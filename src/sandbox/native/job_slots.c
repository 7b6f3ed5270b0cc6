/* A cgroup per background job of a session: a job's
 * processes are tracked by something none of them can leave. setsid and a
 * double fork take a process out of its job's session, group and subtree,
 * never out of its cgroup (no cgroupfs is mounted in the sandbox, and the
 * only way in is the fds below, which only the session's controller holds).
 *
 * The host makes `n` empty child cgroups "job-<i>" of the sandbox's cgroup
 * (v2: the one dir, with no controller enabled for children, so processes
 * may stay in the parent; v1: the pids hierarchy's) and opens, as itself,
 * the parent's cgroup.procs and each slot's for writing: the kernel checks
 * a move against the opener's rights (v2 since Linux 5.16, v1 likewise),
 * and Landlock would refuse the sandbox opening anything in cgroupfs. The
 * controller (driver/jobcg.py) moves its interpreter into a free slot
 * before it forks a job (what the job forks is born there), back to the
 * parent once the job has started, finds a slot's processes by their
 * /proc/PID/cgroup to kill them all, and reuses the slot once it is empty. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/native/native.h"

static const char *slots_parent(const struct nat_cgroup *cg)
{
	if (cg->cpu_per_job) /* a warm worker's: its own job cgroup */
		return NULL;
	if (cg->mode == NAT_CG_V2 && cg->mem[0])
		return cg->mem;
	if (cg->mode == NAT_CG_V1 && cg->pids[0])
		return cg->pids;
	return NULL;
}

static bool slot_path(const char *parent, unsigned i, const char *file, char *out, size_t n)
{
	return snprintf(out, n, "%s/job-%u%s%s", parent, i, file ? "/" : "", file ? file : "") < (int)n;
}

int nat_job_slots_open(struct nat_cgroup *cg, unsigned n, int *fds)
{
	const char *parent = slots_parent(cg);
	char path[PATH_MAX + 64];
	if (!parent || n == 0 || n + 1 > NAT_JOB_SLOTS_MAX) {
		errno = ENOENT;
		return -1;
	}
	for (unsigned i = 0; i <= n; i++)
		fds[i] = -1;
	if (snprintf(path, sizeof path, "%s/cgroup.procs", parent) >= (int)sizeof path ||
	    (fds[0] = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		goto fail;
	for (unsigned i = 0; i < n; i++) {
		if (!slot_path(parent, i, NULL, path, sizeof path) || mkdir(path, 0755) != 0)
			goto fail;
		cg->n_job_slots = i + 1;
		if (!slot_path(parent, i, "cgroup.procs", path, sizeof path) ||
		    (fds[i + 1] = open(path, O_WRONLY | O_CLOEXEC)) < 0)
			goto fail;
	}
	return 0;
fail:;
	int e = errno;
	for (unsigned i = 0; i <= n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	nat_job_slots_remove(cg);
	errno = e;
	return -1;
}

void nat_job_slots_remove(struct nat_cgroup *cg)
{
	const char *parent = slots_parent(cg);
	char path[PATH_MAX + 64];
	for (unsigned i = 0; parent && i < cg->n_job_slots; i++) {
		if (!slot_path(parent, i, NULL, path, sizeof path))
			continue;
		/* The last processes may still be leaving: retry EBUSY for ~2 s. */
		for (int tries = 0; tries < 200 && rmdir(path) != 0 && errno == EBUSY; tries++) {
			struct timespec ts = {0, 10 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
	}
	cg->n_job_slots = 0;
}

void nat_job_slots_gc(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char path[PATH_MAX + 300];
	unsigned i;
	int end;
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "job-%u%n", &i, &end) == 1 && e->d_name[end] == '\0' &&
		    snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
			rmdir(path);
	closedir(d);
}
