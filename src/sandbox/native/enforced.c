/* What this sandbox enforces, built from the command's own verification
 * report (sent after the last step, just before execve) and from the limits
 * that were really written. Nothing is claimed that was not applied. */
#include <stdio.h>

#include "sandbox/native/native.h"
#include "sandbox/user_resources.h"

static void human(char *buf, size_t n, unsigned long long b)
{
	if (b >= (1ull << 30) && b % (1ull << 30) == 0)
		snprintf(buf, n, "%llug", b >> 30);
	else if (b >= (1ull << 20) && b % (1ull << 20) == 0)
		snprintf(buf, n, "%llum", b >> 20);
	else
		snprintf(buf, n, "%llu bytes", b);
}

static const char *cg_name(const struct nat_cgroup *cg)
{
	return cg->mode == NAT_CG_V2 ? "cgroup v2" : cg->mode == NAT_CG_V1 ? "cgroup v1" : NULL;
}

/* Each per-user resource with what this sandbox may hold and what holds it
 * to that: an rlimit (applied by the command, as every rlimit), or the
 * limit of the sandbox's own user namespace where the outer process could
 * write it. */
static json_t *user_resources(uint32_t applied)
{
	size_t n;
	const struct sb_user_resource *rows = sb_user_resources(&n);
	json_t *o = json_object();
	for (size_t i = 0; i < n; i++) {
		const char *by = rows[i].kind == SB_URES_RLIMIT ? "rlimit (the whole sandbox: its own user namespace)"
				 : (applied >> i) & 1	     ? "the sandbox's user namespace (/proc/sys/user)"
							     : NULL;
		json_t *row = json_pack("{s:I, s:s?}", "limit", (json_int_t)rows[i].value, "enforced_by", by);
		if (!by)
			json_object_set_new(row, "note", json_string("this kernel has no such limit (nor the resource)"));
		json_object_set_new(o, rows[i].name, row);
	}
	return o;
}

json_t *nat_enforced_json(const struct nat_plan *p, const struct nat_ready *r)
{
	const struct sb_limits *l = &p->limits;
	const struct nat_cgroup *cg = &p->cg;
	char tmp[64], shm[64], w1[96], w2[96];
	human(tmp, sizeof tmp, l->tmpfs_bytes);
	human(shm, sizeof shm, l->tmpfs_bytes < (64ull << 20) ? l->tmpfs_bytes : (64ull << 20));
	snprintf(w1, sizeof w1, "/tmp (tmpfs, %s)", tmp);
	snprintf(w2, sizeof w2, "/dev/shm (tmpfs, %s)", shm);

	json_t *o = json_object();
	json_object_set_new(o, "backend", json_string("native"));
	json_object_set_new(o, "namespaces", json_pack("[s,s,s,s,s,s,s]", "user", "mount", "pid", "net", "ipc",
							   "uts", "cgroup"));
	json_object_set_new(o, "uid_inside", json_integer(r->uid_inside));
	json_object_set_new(o, "host_uid", json_integer(r->host_uid));
	json_object_set_new(o, "dropped_root", json_boolean(p->drop_root));
	json_object_set_new(o, "network", json_string(!r->loopback_up ? "none (no interface up)"
						      : p->net_dir ? "loopback only; the allow-list proxy's relay on 127.0.0.1:"
								     NAT_STR(SB_NET_PORT)
								   : "loopback only"));
	json_object_set_new(o, "root_filesystem", json_string("tmpfs + read-only system binds"));
	json_object_set_new(o, "writable", json_pack("[s,s]", w1, w2));

	json_t *ll = json_object();
	json_object_set_new(ll, "abi", json_integer(r->landlock_abi > 0 ? r->landlock_abi : 0));
	json_object_set_new(ll, "enforced", json_boolean(r->landlock_abi > 0));
	if (r->landlock_abi > 0) {
		json_object_set_new(ll, "tcp_bind_connect", json_string(!r->landlock_net ? "not handled (ABI < 4)"
								  : p->net_dir ? "denied but port " NAT_STR(SB_NET_PORT) " (the proxy relay)"
									       : "denied"));
		json_object_set_new(ll, "scoped", r->landlock_scoped ? json_pack("[s,s]", "signals", "abstract unix sockets")
								     : json_array());
	} else {
		json_object_set_new(ll, "note", json_string("this kernel has no Landlock"));
	}
	json_object_set_new(o, "landlock", ll);
	if (p->project_dir)
		json_object_set_new(o, "project", json_pack("{s:s, s:s, s:s}", "path", SB_PROJECT_MOUNT, "mount",
							    p->project_exec ? "read-write, nosuid, nodev"
									    : "read-write, nosuid, nodev, noexec",
							    "no_links_or_devices",
							    r->landlock_abi > 0 ? "Landlock: no symlink, FIFO, socket or device "
										 "node can be made there (nor in /work)"
										: "not enforced: this kernel has no Landlock "
										  "(nodev still stops device nodes)"));
	json_object_set_new(o, "seccomp", json_string(r->seccomp ? "enforced" : "not enforced"));
	json_object_set_new(o, "no_new_privs", json_boolean(r->no_new_privs));
	json_object_set_new(o, "capabilities", json_string(r->caps_none && r->bounding_empty ? "none" : "SOME"));
	json_object_set_new(o, "setsid", json_boolean(r->setsid));

	/* memory */
	const char *mem_by = NULL;
	const char *mem_note = NULL;
	if (cg->mem_limited) {
		mem_by = cg_name(cg);
		if (!cg->memsw_limited)
			mem_note = "RAM only: swap use is not limited (no memsw/swap.max)";
	} else if (r->rlimit_data) {
		mem_by = "rlimit DATA";
		mem_note = "per process (heap and private writable mappings), not for the sandbox as a whole";
	}
	json_t *mem = json_pack("{s:s, s:s?}", "limit", l->memory, "enforced_by", mem_by);
	if (mem_note)
		json_object_set_new(mem, "note", json_string(mem_note));
	json_object_set_new(o, "memory", mem);

	const char *pids_by = cg->pids_limited ? cg_name(cg) : r->rlimit_nproc ? "rlimit NPROC" : NULL;
	json_t *pids = json_pack("{s:I, s:s?}", "limit", (json_int_t)l->pids, "enforced_by", pids_by);
	if (!cg->pids_limited && r->rlimit_nproc)
		json_object_set_new(pids, "note", json_string("per uid of this sandbox's own user namespace"));
	json_object_set_new(o, "pids", pids);

	json_t *cpus = json_pack("{s:f, s:s?}", "limit", l->cpus, "enforced_by", cg->cpu_limited ? cg_name(cg) : NULL);
	if (!cg->cpu_limited)
		json_object_set_new(cpus, "note",
				    json_string("not enforced: CPU share needs a cgroup (no rlimit can limit it)"));
	json_object_set_new(cpus, "per", json_string(cg->cpu_per_job ? "job" : "sandbox"));
	if (cg->cpu_limited && cg->cpu_per_job) {
		/* see cgroup.c JOB_CGROUP */
		json_object_set_new(cpus, "sandbox_limit", json_real(l->cpus + NAT_HOUSEKEEPING_CPUS));
		json_object_set_new(cpus, "note",
				    json_sprintf("each job (its process and all it starts) is held to the limit in a "
						 "cgroup of its own; the worker's own work between jobs (forking the next "
						 "job's process, resetting /tmp) may use %g core more: the whole sandbox is "
						 "held to sandbox_limit",
						 NAT_HOUSEKEEPING_CPUS));
	}
	json_object_set_new(o, "cpus", cpus);
	if (cg->note[0])
		json_object_set_new(o, "cgroup_note", json_string(cg->note));
	if (cg->mode == NAT_CG_V2)
		json_object_set_new(o, "cgroup_delegated", json_string(nat_cgroup_base()->how));

	json_object_set_new(o, "per_user_resources", user_resources(r->user_resources));
	json_object_set_new(o, "nofile", json_integer(l->nofile));
	json_object_set_new(o, "fsize_bytes", json_integer((json_int_t)l->fsize_bytes));
	json_object_set_new(o, "core_dumps", json_false());
	json_object_set_new(o, "verified", json_string("reported by the sandboxed process itself after the last "
						       "setup step, just before execve"));
	return o;
}
