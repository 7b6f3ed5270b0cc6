#include "metrics/process.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "metrics/metrics.h"
#include "util/procstat.h"

struct proc {
	pid_t pid, ppid;
	unsigned long long rss;
};

/* Whether p descends from root (by its parents in the list). */
static bool descends(const struct proc *all, size_t n, const struct proc *p, pid_t root)
{
	for (int depth = 0; p && depth < 64; depth++) {
		if (p->ppid == root)
			return true;
		const struct proc *up = NULL;
		for (size_t i = 0; i < n && !up; i++)
			if (all[i].pid == p->ppid)
				up = &all[i];
		p = up;
	}
	return false;
}

static void collect(void *ctx)
{
	(void)ctx;
	double page = (double)sysconf(_SC_PAGESIZE);
	unsigned long long rss = 0;
	if (sb_proc_stat_fields(0, SB_STAT_RSS, 1, &rss) == 0)
		sb_metric_set(SB_M_RESIDENT_BYTES, (double)rss * page, NULL);
	DIR *d = opendir("/proc");
	if (!d)
		return;
	struct proc *all = NULL;
	size_t n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		unsigned long long ppid, r;
		if (*end || pid <= 0 || sb_proc_stat_fields((pid_t)pid, SB_STAT_PPID, 1, &ppid) ||
		    sb_proc_stat_fields((pid_t)pid, SB_STAT_RSS, 1, &r))
			continue;
		if (n == cap) {
			struct proc *m = realloc(all, (cap = cap ? cap * 2 : 256) * sizeof *m);
			if (!m)
				break;
			all = m;
		}
		all[n++] = (struct proc){(pid_t)pid, (pid_t)ppid, r};
	}
	closedir(d);
	pid_t self = getpid();
	unsigned long long sum = 0;
	for (size_t i = 0; i < n; i++)
		if (descends(all, n, &all[i], self))
			sum += all[i].rss;
	free(all);
	sb_metric_set(SB_M_SANDBOX_RESIDENT_BYTES, (double)sum * page, NULL);
}

void sb_metrics_process_start(void)
{
	sb_metrics_collector_remove(collect, NULL);
	sb_metrics_collector_add(collect, NULL);
}
