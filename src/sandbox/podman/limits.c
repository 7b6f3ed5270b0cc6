/* Which limits this host can really enforce under the engine, and how.
 *
 * Rootless Podman on cgroup v1 (and on v2 without delegated controllers)
 * ignores --memory, --pids-limit and --cpus with only a warning ("Resource
 * limits are not supported and ignored on cgroups V1 rootless systems").
 * We do not pass flags that would be ignored, fall back to rlimits that the
 * kernel applies in any case, and report every limit with what enforces it
 * or why nothing does. A limit is never claimed unless it is applied. */
#include "sandbox/podman/podman.h"

#include <stdio.h>

void pm_plan_limits(const struct pm_info *info, struct pm_plan *plan)
{
	plan->use_cg_memory = info->cg_memory;
	plan->use_cg_pids = info->cg_pids;
	plan->use_cg_cpu = info->cg_cpu;
	/* Without a memory cgroup, an rlimit is the only memory bound left.
	 * RLIMIT_DATA counts private writable mappings (what allocations
	 * use); RLIMIT_AS would count address space Sage reserves but never
	 * touches (1.6 GB virtual for 200 MB resident), so Sage cannot start
	 * under as=1g. */
	plan->use_rlimit_data = !info->cg_memory;
	plan->seccomp_error[0] = '\0';
	plan->seccomp_profile = info->seccomp && !info->docker_api_is_podman
					? pm_seccomp_profile(info->seccomp_profile, plan->seccomp_error,
							     sizeof plan->seccomp_error)
					: NULL;
}

static json_t *lim(json_t *value, bool enforced, const char *by, const char *note)
{
	json_t *o = json_pack("{s:o, s:b}", "value", value, "enforced", enforced);
	if (by)
		json_object_set_new(o, "enforced_by", json_string(by));
	if (note)
		json_object_set_new(o, "note", json_string(note));
	return o;
}

json_t *pm_limits_json(const struct sb_limits *l, const struct pm_info *info, const struct pm_plan *plan,
		       enum pm_engine eng)
{
	char cg[64];
	snprintf(cg, sizeof cg, "cgroup v%d", info->cgroup_version ? info->cgroup_version : 2);
	char why[256];
	snprintf(why, sizeof why,
		 "rootless %s on cgroup v%d without this controller delegated ignores the flag, so it is not "
		 "passed",
		 pm_engine_name(eng), info->cgroup_version);
	json_t *o = json_object();

	char by[128];
	if (plan->use_cg_memory) {
		snprintf(by, sizeof by, "%s memory controller (--memory)", cg);
		json_object_set_new(o, "memory", lim(json_string(l->memory), true, by, NULL));
	} else {
		char note[512];
		snprintf(note, sizeof note,
			 "%s; RLIMIT_DATA bounds the private writable memory (heap, anonymous mappings) of "
			 "each process, not their total (up to pids x memory); Sage needs about 300 MB of it to "
			 "start, so use memory >= 512m for Sage jobs",
			 why);
		json_object_set_new(o, "memory",
				    lim(json_string(l->memory), true, "RLIMIT_DATA per process (--ulimit data=)", note));
	}
	if (plan->use_cg_pids) {
		snprintf(by, sizeof by, "%s pids controller (--pids-limit) and RLIMIT_NPROC", cg);
		json_object_set_new(o, "pids", lim(json_integer(l->pids), true, by, NULL));
	} else {
		char note[512];
		snprintf(note, sizeof note,
			 "%s; RLIMIT_NPROC counts the processes and threads of the container's uid: %s", why,
			 eng == PM_PODMAN ? "each podman container has a uid of its own, so this is per container"
					  : "docker containers share the configured user's uid, so this is shared "
					    "with other sagebox containers of this host user running at the same time");
		json_object_set_new(o, "pids",
				    lim(json_integer(l->pids), true, "RLIMIT_NPROC (--ulimit nproc=)", note));
	}
	if (plan->use_cg_cpu) {
		snprintf(by, sizeof by, "%s cpu controller (--cpus)", cg);
		json_object_set_new(o, "cpus", lim(json_real(l->cpus), true, by, NULL));
	} else {
		json_object_set_new(o, "cpus",
				    lim(json_real(l->cpus), false, NULL,
					"not enforced: no cpu controller for rootless containers here; only the "
					"wall-clock timeout bounds CPU use"));
	}
	json_object_set_new(o, "nofile", lim(json_integer(l->nofile), true, "RLIMIT_NOFILE (--ulimit nofile=)", NULL));
	json_object_set_new(o, "fsize",
			    lim(json_integer((json_int_t)l->fsize_bytes), true, "RLIMIT_FSIZE (--ulimit fsize=)", NULL));
	json_object_set_new(o, "tmpfs",
			    lim(json_integer((json_int_t)l->tmpfs_bytes), true, "tmpfs size= on /tmp and on the work dir, each",
				plan->use_cg_memory ? NULL
						    : "tmpfs pages are not bounded by RLIMIT_DATA; this size is "
						      "their only bound"));
	json_object_set_new(o, "timeout_s",
			    lim(json_integer(l->timeout_s), true,
				eng == PM_DOCKER ? "sagebox (kill + rm -f)" : "sagebox (kill + rm -f), conmon --timeout as a backstop",
				NULL));
	return o;
}
