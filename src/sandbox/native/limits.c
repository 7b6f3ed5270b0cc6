/* rlimits: always nofile, fsize, no core dumps and the per-user resources
 * (sigpending, msgqueue, memlock); memory and pids only when no cgroup
 * limits them (cgroup.c). CPU share cannot be an rlimit. */
#include <errno.h>
#include <sys/resource.h>

#include "sandbox/native/native.h"
#include "sandbox/user_resources.h"

static int hard(int res, rlim_t v)
{
	/* soft = hard: the code cannot raise it back. Never above the hard
	 * limit we inherited (raising needs CAP_SYS_RESOURCE on the host):
	 * stricter than asked is still within what enforced promises. */
	struct rlimit cur;
	if (getrlimit(res, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && v > cur.rlim_max)
		v = cur.rlim_max;
	struct rlimit rl = {v, v};
	return setrlimit(res, &rl);
}

int nat_apply_rlimits(const struct nat_plan *p)
{
	const struct sb_limits *l = &p->limits;
	/* fd exhaustion of the host is bounded. */
	if (hard(RLIMIT_NOFILE, l->nofile) != 0)
		return -1;
	/* A single runaway file is bounded (the tmpfs size bounds the sum). */
	if (hard(RLIMIT_FSIZE, l->fsize_bytes) != 0)
		return -1;
	/* No core dumps: they would write the process's memory somewhere. */
	if (hard(RLIMIT_CORE, 0) != 0)
		return -1;
	/* Fallback memory limit: RLIMIT_DATA (brk and private writable
	 * mappings: every heap allocation). Not RLIMIT_AS: `import sage.all`
	 * reserves ~1.5 GB of address space but only ~160 MB of data, so an
	 * AS limit of 256m-1g would stop Sage from starting. Per process. */
	if (p->rlimit_mem && hard(RLIMIT_DATA, l->memory_bytes) != 0)
		return -1;
	/* Fallback pids limit: counted per uid in this user namespace, which
	 * only this sandbox uses. */
	if (p->rlimit_pids && hard(RLIMIT_NPROC, l->pids) != 0)
		return -1;
	/* What is counted per host user (queued signals, queue bytes, locked
	 * memory): this sandbox's own share only (user_resources.c). Counted
	 * in its own user namespace, so the limit holds for the sandbox as a
	 * whole. */
	size_t n;
	const struct sb_user_resource *rows = sb_user_resources(&n);
	for (size_t i = 0; i < n; i++)
		if (rows[i].kind == SB_URES_RLIMIT && hard(rows[i].rlimit, rows[i].value) != 0)
			return -1;
	return 0;
}
