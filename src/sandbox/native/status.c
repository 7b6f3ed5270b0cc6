/* status(): can this machine run the native sandbox, and what would it
 * enforce? Probes the kernel (a throw-away child tries the namespaces) but
 * never runs user code. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "sandbox/native/native.h"
#include "sandbox/sandbox_user.h"

static json_t *exe(const char *path)
{
	return json_pack("{s:s, s:b}", "path", path, "present", path[0] && access(path, X_OK) == 0);
}

json_t *nat_status(void *self)
{
	const struct nat_self *ns = self;
	json_t *o = json_pack("{s:s}", "name", "native");
	bool ok = true;
	char msg[1024] = "", hint[1024] = "";

	/* identity */
	uid_t uid = geteuid();
	gid_t gid = getegid();
	bool root = uid == 0;
	if (root) {
		struct sb_error e = {0};
		if (sb_sandbox_user_resolve(ns->sandbox_user, &uid, &gid, &e) != 0) {
			ok = false;
			snprintf(msg, sizeof msg, "%s", e.msg);
			snprintf(hint, sizeof hint, "%s", e.hint);
		}
		json_object_set_new(o, "started_as_root", json_true());
		json_object_set_new(o, "sandbox_user", json_pack("{s:s, s:I}", "name",
								 ns->sandbox_user[0] ? ns->sandbox_user : "nobody",
								 "host_uid", (json_int_t)uid));
	}

	/* user namespaces, probed for real */
	json_t *un = json_object();
	if (ok) {
		const char *step = "";
		int e = nat_userns_probe(uid, gid, root, &step);
		json_object_set_new(un, "available", json_boolean(e == 0));
		if (e != 0) {
			ok = false;
			char why[512], fix[512];
			if (nat_userns_diagnose(e, why, sizeof why, fix, sizeof fix)) {
				snprintf(msg, sizeof msg, "cannot create the sandbox's namespaces (%s: %s): %s", step,
					 strerror(e), why);
				snprintf(hint, sizeof hint, "%s", fix);
			} else {
				snprintf(msg, sizeof msg, "cannot create the sandbox's namespaces (%s: %s)", step,
					 strerror(e));
				snprintf(hint, sizeof hint, "check that this kernel allows user namespaces "
							    "(`unshare -U true`), or use --backend podman");
			}
			json_object_set_new(un, "error", json_string(msg));
			json_object_set_new(un, "hint", json_string(hint));
		}
	}
	json_object_set_new(o, "user_namespaces", un);

	/* Landlock */
	int abi = nat_landlock_abi();
	json_object_set_new(o, "landlock",
			    json_pack("{s:i, s:b, s:s}", "abi", abi, "available", abi > 0, "covers",
				      abi >= 6   ? "filesystem, TCP bind/connect, signal and abstract socket scoping"
				      : abi >= 4 ? "filesystem, TCP bind/connect"
				      : abi >= 1 ? "filesystem only"
						 : "nothing (no Landlock in this kernel; namespaces and seccomp still apply)"));

	/* seccomp */
	struct sb_error se = {0};
	bool kernel_seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
	bool filter = nat_seccomp_program(&se) != NULL;
	json_t *sc = json_pack("{s:b}", "available", kernel_seccomp && filter);
	if (!kernel_seccomp || !filter) {
		ok = false;
		snprintf(msg, sizeof msg, "%s", kernel_seccomp ? se.msg : "this kernel has no seccomp filter support");
		snprintf(hint, sizeof hint, "%s", kernel_seccomp ? se.hint : "use a kernel built with CONFIG_SECCOMP_FILTER");
		json_object_set_new(sc, "error", json_string(msg));
	}
	json_object_set_new(o, "seccomp", sc);

	/* cgroups and what each limit would be enforced by: tried for real
	 * (cgroup.c nat_cgroup_trial), never inferred from a writable directory */
	struct nat_cgroup cg;
	struct sb_error cgerr = {0};
	const struct nat_cg_base *base = nat_cgroup_base();
	if (nat_cgroup_trial(&ns->limits, &cg, &cgerr) != 0) {
		memset(&cg, 0, sizeof cg);
		snprintf(cg.note, sizeof cg.note, "%.700s", cgerr.msg);
	}
	const char *cgname = cg.mode == NAT_CG_V2 ? "cgroup v2" : cg.mode == NAT_CG_V1 ? "cgroup v1" : NULL;
	json_t *cgj = json_pack("{s:s}", "mode", cg.mode == NAT_CG_V2 ? "v2" : cg.mode == NAT_CG_V1 ? "v1" : "none");
	if (cg.mode == NAT_CG_NONE)
		json_object_set_new(cgj, "why_none", json_string(cg.note));
	if (cg.mode == NAT_CG_V2) {
		json_object_set_new(cgj, "dir", json_string(base->dir));
		json_object_set_new(cgj, "delegated", json_string(base->how));
		json_object_set_new(cgj, "systemd_scope", json_boolean(base->scope));
	}
	json_object_set_new(o, "cgroup", cgj);
	json_object_set_new(o, "would_enforce",
			    json_pack("{s:s, s:s, s:s?, s:s}", "memory",
				      cg.mem_limited ? cgname : "rlimit DATA (per process)", "pids",
				      cg.pids_limited ? cgname : "rlimit NPROC", "cpus", cg.cpu_limited ? cgname : NULL,
				      "nofile_fsize_core", "rlimit"));
	if (cg.cpu_limited && cg.cpu_per_job) /* see cgroup.c JOB_CGROUP */
		json_object_set_new(json_object_get(o, "would_enforce"), "cpus_per_job",
				    json_real(NAT_HOUSEKEEPING_CPUS));
	if (cg.mode != NAT_CG_NONE && cg.note[0])
		json_object_set_new(cgj, "note", json_string(cg.note));

	for (size_t i = 0; i < sizeof ns->commands / sizeof ns->commands[0] && ns->commands[i].name[0]; i++)
		json_object_set_new(o, ns->commands[i].name, exe(ns->commands[i].path));
	json_object_set_new(o, "available", json_boolean(ok));
	if (!ok) {
		json_object_set_new(o, "error", json_string(msg));
		json_object_set_new(o, "hint", json_string(hint));
	}
	return o;
}
