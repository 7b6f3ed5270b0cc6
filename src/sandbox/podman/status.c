/* `sagebox status` for the podman/docker backend, and the description of
 * what a sandbox enforces (shared with spawn). Never runs user code. */
#include "sandbox/podman/podman.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox.h"
#include "sandbox/user_resources.h"

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

/* What of the host the code cannot see, and what it still can: a hidden
 * detail is claimed only where a flag of ours hides it (args.c). */
static json_t *host_details(enum pm_engine eng)
{
	json_t *hidden = json_pack("[s, s]", "cgroup path (own cgroup namespace)", "host name (it is " SB_SANDBOX_HOSTNAME ")");
	json_t *visible = json_pack("[s]", "/proc/self/mountinfo: the storage paths of the image's layers and of the "
					   "files the engine generates (under the host user's home and runtime directory: "
					   "its name and uid), the host paths of the directories bound in (share, the "
					   "packages directory), and the host uid in tmpfs options; no engine option "
					   "hides them");
	if (eng == PM_PODMAN) {
		json_array_append_new(hidden, json_string("/sys (an empty tmpfs)"));
		json_array_append_new(hidden, json_string("/proc/kallsyms"));
		json_array_append_new(hidden, json_string("the host's /etc/hosts entries"));
	} else {
		json_array_append_new(visible, json_string("/sys and /proc/kallsyms (docker has no mask option)"));
	}
	return json_pack("{s:o, s:o}", "hidden", hidden, "visible", visible);
}

/* The rlimit rows are --ulimit flags; the namespace rows cannot be set in
 * a container, and the syscall policy refuses the calls that would use
 * them (inotify, fanotify, new namespaces). */
static json_t *user_resources(enum pm_engine eng)
{
	size_t n;
	const struct sb_user_resource *rows = sb_user_resources(&n);
	json_t *o = json_object();
	for (size_t i = 0; i < n; i++) {
		bool rl = rows[i].kind == SB_URES_RLIMIT;
		json_t *row = json_pack("{s:I, s:s}", "limit", (json_int_t)rows[i].value, "enforced_by",
					rl ? "rlimit (--ulimit)" : "the syscall policy (the calls that would use it are refused)");
		if (rl)
			json_object_set_new(row, "note",
					    json_string(eng == PM_PODMAN
								? "per container (each runs as a uid of its own); the host "
								  "user's own count includes every container's"
								: "shared by all containers of this host user (one user "
								  "namespace, one uid): together they hold at most this"));
		json_object_set_new(o, rows[i].name, row);
	}
	return o;
}

json_t *pm_enforced_json(const struct pm_self *pm, const struct pm_info *info,
			 const struct pm_plan *plan, const struct pm_image *img, const struct sb_limits *l, unsigned uid)
{
	char user[128];
	if (pm->eng == PM_DOCKER)
		pm_user_arg(pm, 0, user, sizeof user);
	else if (uid)
		snprintf(user, sizeof user, "uid %u (its own), group of %s", uid, pm->container_user);
	else if (info->uid_top && info->uid_top < PM_UID_FIRST + PM_UID_MIN_COUNT)
		snprintf(user, sizeof user, "none: podman maps only uids 0-%u, too few for a uid of its own per container",
			 info->uid_top - 1);
	else
		snprintf(user, sizeof user, "a uid of its own per container (%u-%u), group of %s", PM_UID_FIRST,
			 (info->uid_top && info->uid_top < PM_UID_FIRST + PM_UID_COUNT ? info->uid_top
										: PM_UID_FIRST + PM_UID_COUNT) - 1,
			 pm->container_user);
	const enum pm_engine eng = pm->eng;
	char tmpfs[128], work[160];
	snprintf(tmpfs, sizeof tmpfs, "/tmp (tmpfs, %llu MiB, nosuid, nodev)",
		 (unsigned long long)(l->tmpfs_bytes >> 20));
	snprintf(work, sizeof work, "%s (tmpfs, %llu MiB, nosuid, nodev)", SB_SANDBOX_WORKDIR,
		 (unsigned long long)(l->tmpfs_bytes >> 20));
	json_t *o = json_pack(
		"{s:s, s:o, s:o, s:s, s:b, s:s, s:s, s:[s, s, s], s:s, s:s, s:b, s:s, s:s, s:s}", "backend",
		pm_engine_name(eng), "engine", pm_engine_json(pm, info), "image",
		pm_image_json(pm, img), "user", user, "rootless", info->rootless, "network",
		"none", "root_filesystem", "read-only", "writable", tmpfs, work, "/dev/shm (tmpfs, 64 MiB)",
		"host_mounts",
		eng == PM_PODMAN ? "none (read-only: the engine's generated /etc/hostname, /etc/passwd, /run/.containerenv)"
				 : "none (read-only: the engine's generated /etc/hosts, /etc/hostname, /run/.containerenv)", "capabilities", "none", "no_new_privileges", true, "seccomp",
		plan->seccomp_profile ? "sagebox's syscall policy (sagebox policy) compiled onto the engine's default profile"
		: info->seccomp	      ? "the engine's default profile only (it allows unshare, setns, mount, ptrace)"
				      : "off (the engine reports no seccomp)",
		"code_input", "stdin", "pull", "never");
	json_object_set_new(o, "limits", pm_limits_json(l, info, plan, eng));
	json_object_set_new(o, "host_details", host_details(eng));
	json_object_set_new(o, "per_user_resources", user_resources(eng));
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
	else if (plan->seccomp_error[0])
		json_array_append_new(warn, json_string(plan->seccomp_error));
	else if (!info->seccomp)
		json_array_append_new(warn, json_string("the engine applies no seccomp filter: sagebox's syscall "
							"policy is not enforced"));
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
	json_object_set_new(st, "enforced", pm_enforced_json(pm, &info, &plan, &img, &pm->limits, 0));
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
