/* The table of per-user kernel resources (see user_resources.h). */
#include "sandbox/user_resources.h"

#include <sys/resource.h>

static const struct sb_user_resource rows[] = {
	{"sigpending", SB_URES_RLIMIT, RLIMIT_SIGPENDING, 128,
	 "queued signals and POSIX timers, counted per user (all of a host user's processes share one count)",
	 "a job queueing ~96k real-time signals or creating that many timers, after which timer_create and "
	 "sigqueue fail with EAGAIN for every process of the host user"},
	{"msgqueue", SB_URES_RLIMIT, RLIMIT_MSGQUEUE, 0,
	 "bytes of POSIX message queues, counted per user (the syscall policy refuses mq_* as well)",
	 "a job filling the host user's 800 KB queue budget"},
	{"memlock", SB_URES_RLIMIT, RLIMIT_MEMLOCK, 64 << 10,
	 "locked memory; SHM_LOCK'ed SysV segments are counted per user",
	 "a job locking the host user's whole allowance (and RAM that can never be swapped)"},
	{"max_inotify_instances", SB_URES_USERNS, 0, 0,
	 "inotify instances of the sandbox's user namespace, counted up to the host user's 128",
	 "a job holding all 128 instances: inotify_init fails (EMFILE) in other sandboxes and the user's programs"},
	{"max_inotify_watches", SB_URES_USERNS, 0, 0, "inotify watches, likewise",
	 "a job holding the host user's watches"},
	{"max_fanotify_groups", SB_URES_USERNS, 0, 0, "fanotify groups, likewise (unprivileged since Linux 5.13)",
	 "a job holding the host user's 128 groups"},
	{"max_fanotify_marks", SB_URES_USERNS, 0, 0, "fanotify marks, likewise", "a job holding the host user's marks"},
	{"max_user_namespaces", SB_URES_USERNS, 0, 0,
	 "namespaces created inside the sandbox (the syscall policy refuses them as well)",
	 "a job using up the host user's namespace allowance"},
	{"max_pid_namespaces", SB_URES_USERNS, 0, 0, "likewise", "likewise"},
	{"max_net_namespaces", SB_URES_USERNS, 0, 0, "likewise", "likewise"},
	{"max_mnt_namespaces", SB_URES_USERNS, 0, 0, "likewise", "likewise"},
	{"max_ipc_namespaces", SB_URES_USERNS, 0, 0, "likewise", "likewise"},
	{"max_uts_namespaces", SB_URES_USERNS, 0, 0, "likewise", "likewise"},
	{"max_cgroup_namespaces", SB_URES_USERNS, 0, 0, "likewise", "likewise"},
	{"max_time_namespaces", SB_URES_USERNS, 0, 0, "likewise", "likewise"},
};

const struct sb_user_resource *sb_user_resources(size_t *n)
{
	*n = sizeof rows / sizeof rows[0];
	return rows;
}

json_t *sb_user_resources_json(unsigned sandboxes)
{
	json_t *o = json_object();
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct sb_user_resource *r = &rows[i];
		json_t *row = json_pack("{s:I, s:s}", "per_sandbox", (json_int_t)r->value, "counts", r->counts);
		struct rlimit own;
		if (r->kind == SB_URES_RLIMIT && getrlimit(r->rlimit, &own) == 0 && own.rlim_cur != RLIM_INFINITY) {
			uint64_t share = r->value * sandboxes;
			json_object_set_new(row, "host_user_limit", json_integer((json_int_t)own.rlim_cur));
			json_object_set_new(row, "taken_by_sandboxes_at_most", json_integer((json_int_t)share));
			json_object_set_new(row, "enough_left", json_boolean(share <= own.rlim_cur / 2));
		}
		json_object_set_new(o, r->name, row);
	}
	return o;
}
