/* `sagebox status` for the podman/docker backend, and the description of
 * what a sandbox enforces (shared with spawn). Never runs user code. */
#include "sandbox/podman/podman.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox.h"

#define PM_BUILD_CMD "sagebox image build --tag localhost/sagebox-sage:deb12"

json_t *pm_engine_json(const struct pm_self *pm, const struct pm_info *info)
{
	const enum pm_engine eng = pm->eng;
	return json_pack("{s:s, s:s, s:s, s:b, s:s, s:s, s:s, s:i, s:s, s:{s:b, s:b, s:b}}", "name",
			 pm_engine_name(eng), "executable", pm->exe, "version", info->version, "rootless",
			 info->rootless, "rootless_check", info->rootless_how, "oci_runtime", info->oci_runtime,
			 "storage_driver", info->storage_driver, "cgroup_version", info->cgroup_version,
			 "cgroup_manager", info->cgroup_manager, "security", "seccomp", info->seccomp, "apparmor",
			 info->apparmor, "selinux", info->selinux);
}

json_t *pm_image_json(const struct pm_self *pm, const struct pm_image *img)
{
	json_t *o = json_pack("{s:s, s:b}", "name", pm->image, "present", img->present);
	if (img->present) {
		json_object_set_new(o, "id", json_string(img->id));
		if (img->digest[0])
			json_object_set_new(o, "digest", json_string(img->digest));
		if (img->size)
			json_object_set_new(o, "size_bytes", json_integer((json_int_t)img->size));
	}
	bool floating = pm_image_floating(pm->image);
	json_object_set_new(o, "pinned", json_boolean(!floating));
	if (floating) {
		char *hint = NULL;
		int n;
		if (img->repo_digest[0])
			n = asprintf(&hint,
				     "'%s' is a tag and may point to different content tomorrow; pin what you have "
				     "tested with: image = %s",
				     pm->image, img->repo_digest);
		else if (img->present)
			n = asprintf(&hint,
				     "'%s' is a tag and may point to different content tomorrow; pin it with a "
				     "digest (name@sha256:..., see '%s image inspect --format {{.RepoDigests}} %s') "
				     "or use the image ID: image = %s",
				     pm->image, pm->exe, pm->image, img->id);
		else
			n = asprintf(&hint,
				     "'%s' is a tag; after getting it, pin it as name@sha256:<digest> for "
				     "reproducible results",
				     pm->image);
		if (n >= 0) {
			json_object_set_new(o, "pin_hint", json_string(hint));
			free(hint);
		}
	}
	if (!img->present) {
		char *cmd = NULL;
		if (asprintf(&cmd, "%s pull %s", pm->exe, pm->image) >= 0) {
			json_object_set_new(o, "pull_command", json_string(cmd));
			free(cmd);
		}
		json_object_set_new(o, "build_command", json_string(PM_BUILD_CMD));
	}
	return o;
}

json_t *pm_enforced_json(const struct pm_self *pm, const struct pm_info *info,
			 const struct pm_plan *plan, const struct pm_image *img, const struct sb_limits *l)
{
	const enum pm_engine eng = pm->eng;
	char tmpfs[128], work[160];
	snprintf(tmpfs, sizeof tmpfs, "/tmp (tmpfs, %llu MiB, nosuid, nodev)",
		 (unsigned long long)(l->tmpfs_bytes >> 20));
	snprintf(work, sizeof work, "%s (tmpfs, %llu MiB, nosuid, nodev)", SB_SANDBOX_WORKDIR,
		 (unsigned long long)(l->tmpfs_bytes >> 20));
	json_t *o = json_pack(
		"{s:s, s:o, s:o, s:s, s:b, s:s, s:s, s:[s, s, s], s:s, s:s, s:b, s:s, s:s, s:s}", "backend",
		pm_engine_name(eng), "engine", pm_engine_json(pm, info), "image",
		pm_image_json(pm, img), "user", pm->container_user, "rootless", info->rootless, "network",
		"none", "root_filesystem", "read-only", "writable", tmpfs, work, "/dev/shm (tmpfs, 64 MiB)",
		"host_mounts", "none (read-only: the engine's generated /etc/hosts, /etc/hostname, /run/.containerenv)", "capabilities", "none", "no_new_privileges", true, "seccomp",
		plan->seccomp_profile ? "sagebox's profile: the engine's default without unshare, setns, mount, "
					"keyctl, ptrace, clone3 and namespace flags of clone"
		: info->seccomp	      ? "the engine's default profile (it allows unshare, setns and mount)"
				      : "off (the engine reports no seccomp)",
		"code_input", "stdin", "pull", "never");
	json_object_set_new(o, "limits", pm_limits_json(l, info, plan, eng));
	json_t *warn = json_array();
	if (!plan->use_cg_memory || !plan->use_cg_pids || !plan->use_cg_cpu) {
		char w[512];
		snprintf(w, sizeof w,
			 "cgroup v%d, rootless: %s ignores --memory/--pids-limit/--cpus here (\"Resource limits "
			 "are not supported and ignored on cgroups V1 rootless systems\"); memory falls back "
			 "to RLIMIT_DATA per process, pids to RLIMIT_NPROC, cpus is not limited",
			 info->cgroup_version, pm_engine_name(eng));
		json_array_append_new(warn, json_string(w));
	}
	if (info->docker_api_is_podman)
		json_array_append_new(warn, json_string("docker CLI on podman's Docker API: it cannot pass sagebox's "
							"seccomp profile, so the engine's default applies (it allows "
							"new user namespaces); use --backend podman for the stricter one"));
	else if (!plan->seccomp_profile)
		json_array_append_new(warn, json_string("sagebox's stricter seccomp profile could not be set up; "
							"the engine's default allows new user namespaces"));
	if (pm_image_floating(pm->image))
		json_array_append_new(warn, json_string("the image is a tag, not a pinned digest"));
	json_object_set_new(o, "warnings", warn);
	return o;
}

json_t *pm_status(const struct pm_self *pm)
{
	const enum pm_engine eng = pm->eng;
	struct sb_error err = {0};
	struct pm_info info;
	json_t *st = json_pack("{s:s, s:b, s:s}", "backend", pm_engine_name(eng), "available", false, "executable",
			       pm->exe);
	if (pm_info_get(pm, &info, &err) < 0) {
		json_object_set_new(st, "error", json_string(err.msg));
		json_object_set_new(st, "hint", json_string(err.hint));
		return st;
	}
	json_object_set_new(st, "engine", pm_engine_json(pm, &info));
	if (info.rootless)
		pm_cleanup_orphans_once(pm);
	struct pm_image img;
	if (pm_image_inspect(pm, &img, &err) < 0) {
		json_object_set_new(st, "error", json_string(err.msg));
		return st;
	}
	struct pm_plan plan;
	pm_plan_limits(&info, &plan);
	json_object_set_new(st, "enforced", pm_enforced_json(pm, &info, &plan, &img, &pm->limits));
	json_object_set_new(st, "orphans_removed", json_integer(pm_orphans_removed()));
	if (!info.rootless) {
		pm_refuse_not_rootless(pm, &info, &err);
	} else if (!img.present) {
		pm_refuse_missing_image(pm, &err);
	} else {
		json_object_set_new(st, "available", json_true());
		return st;
	}
	json_object_set_new(st, "error", json_string(err.msg));
	json_object_set_new(st, "hint", json_string(err.hint));
	return st;
}
