/* Internal to the Podman/Docker backend: one engine description (podman or
 * docker), helper-command execution, the host facts we learn from
 * `podman info`, the run argv, and label-based cleanup.
 *
 * The two engines differ only in: the executable, how rootless mode is
 * confirmed, the info/ps/inspect formats, and a few flags Docker lacks. */
#ifndef SAGEBOX_SANDBOX_PODMAN_H
#define SAGEBOX_SANDBOX_PODMAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <limits.h>

#include "core/limits.h"
#include "core/paths.h"
#include "util/error.h"

enum pm_engine { PM_PODMAN, PM_DOCKER };

/* The label every container of ours carries, and the owner label that names
 * the sagebox process that started it (for orphan cleanup). */
#define PM_LABEL "sagebox=1"
#define PM_LABEL_KEY "sagebox"
#define PM_OWNER_KEY "sagebox.owner"
#define PM_NAME_PREFIX "sagebox-"

/* Helper commands (info, inspect, rm, ps) must not hang sagebox. */
#define PM_HELPER_TIMEOUT_MS 20000
/* rm -f of a running container: SIGKILL then cleanup, usually < 1 s. */
#define PM_RM_TIMEOUT_MS 30000
/* How long a successful `podman info` is trusted (rootless, cgroups). */
#define PM_INFO_TTL_S 30

/* An open podman or docker backend: its settings, copied at open. */
struct pm_self {
	enum pm_engine eng;
	char exe[PATH_MAX];        /* the engine executable (pm_exe_for) */
	char image[512];
	char container_user[64];
	struct sb_limits limits;   /* a job's defaults, for status */
	char shares[SB_SHARES_MAX][PATH_MAX]; /* bound read-only at /data/NAME */
	unsigned n_shares;
	char packages[PATH_MAX];   /* the user's packages: bound at SB_PACKAGES_MOUNT; "": none */
};

/* ---- exec.c: run the engine with a scrubbed environment ---- */

/* The executable to run: the `podman` setting, or "docker" for the docker
 * engine when the setting was left at its default "podman". */
const char *pm_exe_for(const char *setting, enum pm_engine eng);

/* The environment passed TO podman/docker (not into the container): the
 * seed's allow-list, plus the DOCKER_* endpoint variables for docker.
 * Returns a NULL-terminated array in static per-engine storage built once. */
char *const *pm_host_env(enum pm_engine eng);

struct pm_out {
	int status;       /* waitpid status; -1 if it could not be started */
	bool timed_out;
	int spawn_errno;  /* errno of posix_spawn, 0 if it started */
	char *out;        /* stdout, NUL-terminated, trailing whitespace trimmed */
	char *err;        /* stderr, likewise */
};
/* Run exe argv (argv[0] is the name shown) with stdin from /dev/null,
 * capture stdout/stderr (capped at 4 MiB each), kill at timeout_ms.
 * Returns 0 if it ran and exited 0, -1 otherwise (details in *o). */
int pm_run(const char *exe, const char *const *argv, enum pm_engine eng, int timeout_ms, struct pm_out *o);
void pm_out_free(struct pm_out *o);
/* "exit 3: <first line of stderr>" and the like, for error messages. */
void pm_out_describe(const struct pm_out *o, char *buf, size_t n);

/* Start exe argv with stdin/stdout/stderr on new pipes, in its own session.
 * fds[0] is the write end of its stdin, fds[1]/fds[2] the read ends of its
 * stdout/stderr (all O_CLOEXEC). Returns 0, or -1 with err filled. */
int pm_spawn_piped(const char *exe, const char *const *argv, enum pm_engine eng, pid_t *pid, int fds[3],
		   struct sb_error *err);

/* ---- info.c: what the engine says about this host (cached) ---- */

struct pm_info {
	bool rootless;
	char rootless_how[160];  /* how rootless mode was confirmed or refuted */
	char version[64];
	char oci_runtime[64];
	char storage_driver[64];
	char cgroup_manager[32];
	int cgroup_version;      /* 1 or 2, 0 unknown */
	/* Whether the engine can apply these cgroup limits to our containers. */
	bool cg_memory, cg_pids, cg_cpu;
	bool seccomp;
	bool apparmor, selinux;
	char seccomp_profile[256]; /* the engine's default profile file, if it says */
	bool docker_api_is_podman; /* docker CLI talking to `podman system service` */
	/* podman: container uids 0..uid_top-1 are all mapped in its user
	 * namespace (host.idMappings.uidmap); 0: not reported. */
	unsigned uid_top;
};
/* Fill *info from `podman info` (or `docker info`), using a per-process
 * cache for PM_INFO_TTL_S seconds. Returns 0, or -1 with err filled when
 * the engine cannot be run or its answer cannot be read. Does NOT fail on
 * rootless=false: the caller decides (status reports, spawn refuses). */
int pm_info_get(const struct pm_self *pm, struct pm_info *info, struct sb_error *err);
/* Fill err with the refusal for a non-rootless engine. Returns -1. */
int pm_refuse_not_rootless(const struct pm_self *pm, const struct pm_info *info,
			   struct sb_error *err);

/* ---- image.c ---- */

struct pm_image {
	bool present;
	char id[160];         /* the image ID the container is started from */
	char digest[160];     /* manifest digest (sha256:...) or empty */
	char repo_digest[640];/* name@sha256:... usable as a pinned setting, or empty */
	uint64_t size;
};
/* Inspect pm->image. Returns 0 (present or not, see img->present), -1 with
 * err filled when the engine failed for another reason. */
int pm_image_inspect(const struct pm_self *pm, struct pm_image *img,
		     struct sb_error *err);
/* Is this image reference a floating tag (no digest; ":latest" or no tag)? */
bool pm_image_floating(const char *image);
/* The refusal for a missing image: what is missing, the exact pull command
 * and the local-build alternative. Returns -1. */
int pm_refuse_missing_image(const struct pm_self *pm, struct sb_error *err);

/* ---- limits.c: what this host can enforce, and how ---- */

struct pm_plan {
	/* flags to pass */
	bool use_cg_memory, use_cg_pids, use_cg_cpu; /* --memory, --pids-limit, --cpus */
	bool use_rlimit_data;                         /* --ulimit data= (memory fallback) */
	const char *seccomp_profile;                  /* --security-opt seccomp=, or NULL */
	char seccomp_error[512];                      /* why there is none, when it is needed */
};
void pm_plan_limits(const struct pm_info *info, struct pm_plan *plan);
/* {"memory": {...}, "pids": {...}, "cpus": {...}, "nofile", "fsize", "tmpfs",
 *  "wall_clock"} each with value, enforced and enforced_by (or why not). */
json_t *pm_limits_json(const struct sb_limits *l, const struct pm_info *info, const struct pm_plan *plan,
		       enum pm_engine eng);

/* ---- seccomp.c, seccomp_compile.c: the syscall policy as an OCI profile ---- */

/* Compile the policy table onto profile (an OCI seccomp profile, changed in
 * place). Returns 0, or -1 with why filled. */
int pm_seccomp_compile(json_t *profile, char *why, size_t n);
/* The compiled profile derived from base_profile (the engine's default
 * profile file; NULL: containers-common's), written once per process.
 * Returns its path, or NULL with why filled. */
const char *pm_seccomp_profile(const char *base_profile, char *why, size_t n);

/* ---- args.c: the `podman run` argv ---- */

struct pm_argv {
	const char **v;
	size_t n, cap;
	char **owned; /* strings allocated for v, freed with it */
	size_t nowned, capowned;
};
struct sb_sandbox_req;
/* The request binds the user's project folder (a workspace session with
 * project_dir): the container then runs as PM_PROJECT_UID mapped to the
 * host user (keep-id). */
bool pm_binds_project(const struct sb_sandbox_req *req);
/* Build: run --rm -i --name NAME --label ... IMAGE_ID argv[1..].
 * Returns 0, -1 with err filled (bad argv[0], out of memory). */
int pm_build_run_argv(const struct pm_self *pm, const struct pm_info *info, const struct pm_plan *plan,
		      const char *name, const char *owner, const char *image_ref, const struct sb_sandbox_req *req,
		      unsigned uid, struct pm_argv *out, struct sb_error *err);
/* The --user value: "UID:GROUP" with the configured user's group (podman),
 * or the configured user itself when uid is 0 (docker). */
void pm_user_arg(const struct pm_self *pm, unsigned uid, char *buf, size_t n);
void pm_argv_free(struct pm_argv *a);

/* ---- owner.c: who started a container, and is it still alive ---- */

/* "<boot id prefix>.<pid>.<start time>" of this process (static storage). */
const char *pm_owner_self(void);
/* Is the process an owner label names still running on this boot? */
bool pm_owner_alive(const char *owner);
/* A uid for one container, drawn from [PM_UID_FIRST, +PM_UID_COUNT): inside
 * podman's user namespace (the host user's subordinate ids), away from the
 * image's own users. Random: two live containers share one with a chance
 * of about k^2/80000 for k containers (and then share their counts).
 * uid_top (pm_info): the range ends below it when the host user has fewer
 * subordinate uids; 0 when fewer than PM_UID_MIN_COUNT are left (the
 * caller refuses). */
#define PM_UID_FIRST 20000u
#define PM_UID_COUNT 40000u
#define PM_UID_MIN_COUNT 1000u
unsigned pm_container_uid(unsigned uid_top);
/* The container uid of every project-folder session (mapped to the host
 * user): the range's first, so the image is copied for one id mapping only. */
#define PM_PROJECT_UID PM_UID_FIRST
/* A new unique container name "sagebox-<pid>-<n>-<random>". */
void pm_container_name(char *buf, size_t n);

/* ---- cleanup.c ---- */

/* `podman kill --signal KILL name`, errors ignored. */
void pm_kill_container(const char *exe, enum pm_engine eng, const char *name);
/* Force-remove one container (rm -f --time 0, then kill and retry while it
 * still exists), "no such container" counting as success. Returns 0 if it
 * is gone afterwards. */
int pm_remove(const char *exe, enum pm_engine eng, const char *name);
/* Once per process: remove containers with our label whose owner is dead
 * (a sagebox killed with SIGKILL mid-run). Returns how many were removed. */
int pm_cleanup_orphans_once(const struct pm_self *pm);
/* How many orphans this process removed so far. */
int pm_orphans_removed(void);
/* The same, unconditionally (for tests and status). */
int pm_cleanup_orphans(const struct pm_self *pm);

/* ---- status.c / spawn.c: the two backends share these ---- */
json_t *pm_engine_json(const struct pm_self *pm, const struct pm_info *info);
json_t *pm_image_json(const struct pm_self *pm, const struct pm_image *img);
/* What a sandbox with these limits enforces on this host (sb->enforced). */
/* uid: the container's own uid (0: status, before any container). */
json_t *pm_enforced_json(const struct pm_self *pm, const struct pm_info *info,
			 const struct pm_plan *plan, const struct pm_image *img, const struct sb_limits *l, unsigned uid);
json_t *pm_status(const struct pm_self *pm);
struct sb_sandbox;
struct sb_sandbox_req;
struct sb_exit;
int pm_spawn(const struct pm_self *pm, const struct sb_sandbox_req *req,
	     struct sb_sandbox *sb, struct sb_error *err);
void pm_kill(struct sb_sandbox *sb);
int pm_wait(struct sb_sandbox *sb, struct sb_exit *ex, struct sb_error *err);

const char *pm_engine_name(enum pm_engine eng);

/* ---- build.c: `sagebox image build` (the image_build operation) ---- */
struct sb_image_recipe;
int pm_image_build(const struct pm_self *pm, const struct sb_image_recipe *r);

#endif
