/* The `podman run` (or `docker run`) argv: the seed's flags and more, each
 * with the attack it stops. Nothing here comes from the user's code; the
 * command's own argv goes after the image, as arguments, never through a
 * shell. */
#include "sandbox/podman/podman.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "sandbox/user_resources.h"

static int push(struct pm_argv *a, const char *s)
{
	if (a->n + 2 > a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 128;
		const char **nv = realloc(a->v, nc * sizeof *nv);
		if (!nv)
			return -1;
		a->v = nv;
		a->cap = nc;
	}
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
	return 0;
}

static int pushf(struct pm_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int pushf(struct pm_argv *a, const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if (a->nowned + 1 > a->capowned) {
		size_t nc = a->capowned ? a->capowned * 2 : 32;
		char **no = realloc(a->owned, nc * sizeof *no);
		if (!no) {
			free(s);
			return -1;
		}
		a->owned = no;
		a->capowned = nc;
	}
	a->owned[a->nowned++] = s;
	return push(a, s);
}

void pm_argv_free(struct pm_argv *a)
{
	for (size_t i = 0; i < a->nowned; i++)
		free(a->owned[i]);
	free(a->owned);
	free(a->v);
	memset(a, 0, sizeof *a);
}

/* "root", "0", "root:x", "0:0": the container's uid 0 is the host user
 * itself under rootless podman, and owns the image's files. */
static bool user_is_root(const char *u)
{
	size_t n = strcspn(u, ":");
	if (n == 4 && strncmp(u, "root", 4) == 0)
		return true;
	if (n == 0)
		return true; /* ":gid" means the image's default user, often root */
	for (size_t i = 0; i < n; i++)
		if (u[i] != '0')
			return false;
	return true;
}

void pm_user_arg(const struct pm_self *pm, unsigned uid, char *buf, size_t n)
{
	const char *colon = strchr(pm->container_user, ':');
	if (!uid)
		snprintf(buf, n, "%s", pm->container_user);
	else
		snprintf(buf, n, "%u:%s", uid, colon ? colon + 1 : pm->container_user);
}

bool pm_binds_project(const struct sb_sandbox_req *req)
{
	return req->workspace_bytes && req->project_dir;
}

int pm_build_run_argv(const struct pm_self *pm, const struct pm_info *info, const struct pm_plan *plan,
		      const char *name, const char *owner, const char *image_ref, const struct sb_sandbox_req *req,
		      unsigned uid, struct pm_argv *a, struct sb_error *err)
{
	const enum pm_engine eng = pm->eng;
	const char *const *argv = req->argv;
	const struct sb_limits *l = req->limits;
	memset(a, 0, sizeof *a);
	if (!argv || !argv[0] || argv[0][0] != '/')
		return sb_fail(err, "internal: the sandboxed command must be an absolute path");
	if (!pm->container_user[0] || user_is_root(pm->container_user)) {
		sb_fail(err, "refusing to run as container user '%s': code must not run as root in the container",
			pm->container_user);
		return sb_hint(err, "set container_user (--container-user) to the image's unprivileged user, e.g. sage");
	}
	if (image_ref[0] == '-')
		return sb_fail(err, "refusing image reference '%s': it would be read as an option", image_ref);
	int r = 0;
	r |= push(a, pm->exe);
	if (eng == PM_PODMAN)
		/* podman's warnings ("/" is not a shared mount, ...) would
		 * otherwise be mixed into the program's stderr. */
		r |= push(a, "--log-level=error");
	r |= push(a, "run");
	r |= push(a, "--rm");
	r |= push(a, "-i"); /* the code arrives on stdin, never through a host mount */
	r |= push(a, "--name");
	r |= push(a, name);
	/* Labels find our containers again: after a run, and after a sagebox
	 * that was killed with SIGKILL (cleanup.c). */
	r |= push(a, "--label");
	r |= push(a, PM_LABEL);
	r |= push(a, "--label");
	r |= pushf(a, "%s=%s", PM_OWNER_KEY, owner);
	/* Stops: a run fetching (possibly attacker-chosen) code from a
	 * registry; the image is whatever the user put there on purpose. */
	r |= push(a, "--pull=never");
	/* Stops: exfiltration, downloads, attacks on the LAN and on services
	 * listening on the host's loopback. Only a loopback device inside. */
	r |= push(a, "--network=none");
	/* Stops: the code learning host details the native sandbox does not
	 * show: the host's cgroup path (own cgroup
	 * namespace), the host's /sys (devices, cgroup tree, kernel: masked
	 * by an empty tmpfs), kernel symbol names, the host-chosen container
	 * name as hostname, and the host's /etc/hosts entries. */
	r |= push(a, "--cgroupns=private");
	r |= push(a, "--hostname");
	r |= push(a, SB_SANDBOX_HOSTNAME);
	if (eng == PM_PODMAN) {
		r |= push(a, "--security-opt");
		r |= push(a, "mask=/sys:/proc/kallsyms");
		r |= push(a, "--no-hosts");
	}
	/* Stops: code modifying the image (persistence across runs, trojaned
	 * binaries for the next job). */
	r |= push(a, "--read-only");
	if (eng == PM_PODMAN)
		/* Podman would add unbounded writable tmpfs on /run, /tmp and
		 * /var/tmp: a RAM-filling DoS where no memory cgroup applies. */
		r |= push(a, "--read-only-tmpfs=false");
	/* The only writable places: size-bounded tmpfs, no device files, no
	 * setuid binaries. Nothing of the host is mounted. */
	r |= push(a, "--tmpfs");
	r |= pushf(a, "/tmp:rw,nosuid,nodev,size=%llu,mode=1777", (unsigned long long)l->tmpfs_bytes);
	/* The work dir is a tmpfs of its own: a --workdir that does not exist
	 * is created by the runtime as root 0755, unwritable for the user.
	 * Podman's U hands it to the container user with mode 0700; docker
	 * lacks U, so there it is world-writable with the sticky bit (the
	 * container has only the one user anyway). */
	r |= push(a, "--tmpfs");
	if (eng == PM_PODMAN)
		r |= pushf(a, "%s:rw,nosuid,nodev,size=%llu,mode=0700,U", SB_SANDBOX_WORKDIR,
			   (unsigned long long)l->tmpfs_bytes);
	else
		r |= pushf(a, "%s:rw,nosuid,nodev,size=%llu,mode=1777", SB_SANDBOX_WORKDIR,
			   (unsigned long long)l->tmpfs_bytes);
	r |= push(a, "--shm-size=64m");
	if (req->workspace_bytes) {
		/* A session's workspace: a tmpfs of its own size, as the work dir. */
		r |= push(a, "--tmpfs");
		r |= pushf(a, "%s:rw,nosuid,nodev,size=%llu,%s", SB_SANDBOX_WORKSPACE,
			   (unsigned long long)req->workspace_bytes, eng == PM_PODMAN ? "mode=0700,U" : "mode=1777");
	}
	if (pm_binds_project(req)) {
		if (eng != PM_PODMAN || !uid) {
			pm_argv_free(a);
			return sb_fail(err, "internal: a project folder needs podman and a uid of the container's own");
		}
		/* The user's project folder, read-write: no setuid binary or
		 * device node there works (nosuid, nodev), nothing runs from it
		 * unless the user said so (noexec), and its .git (hooks and
		 * config git runs on the host) is read-only. The code runs as
		 * the host user here (keep-id maps the user to the container's
		 * uid), so what it writes there is the user's own file; that
		 * uid is then shared with the user's processes, as the native
		 * sandbox's is (docs/PODMAN.md). */
		r |= push(a, "--userns");
		r |= pushf(a, "keep-id:uid=%u", uid);
		r |= push(a, "--volume");
		r |= pushf(a, "%s:%s:rw,nosuid,nodev,%s", req->project_dir, SB_PROJECT_MOUNT,
			   req->project_exec ? "exec" : "noexec");
		char git[PATH_MAX + 8];
		struct stat st;
		snprintf(git, sizeof git, "%s/.git", req->project_dir);
		if (lstat(git, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
			r |= push(a, "--volume");
			r |= pushf(a, "%s:%s/.git:ro,nosuid,nodev,noexec", git, SB_PROJECT_MOUNT);
		}
	}
	/* What the user chose to share: read-only, so the code can read those
	 * directories and never change them (config checked the paths have
	 * no ',' that would end the option). */
	for (unsigned i = 0; i < pm->n_shares; i++) {
		r |= push(a, "--mount");
		r |= pushf(a, "type=bind,source=%s,target=%s%s,readonly=true", pm->shares[i], SB_SHARE_MOUNT,
			   strrchr(pm->shares[i], '/'));
	}
	/* The user's package presets (packages/packages.h): read-only too,
	 * bound even empty (what `packages add` puts there later shows in
	 * a container already running); left out when the directory has
	 * gone since the backend opened, as native does. */
	if (pm->packages[0] && !strchr(pm->packages, ',') && access(pm->packages, F_OK) == 0) {
		r |= push(a, "--mount");
		r |= pushf(a, "type=bind,source=%s,target=%s,readonly=true", pm->packages, SB_PACKAGES_MOUNT);
	}
	/* network set: this sandbox's own proxy socket directory,
	 * read-only (the code can connect to the socket, never replace it).
	 * --network=none stays: the driver's relay listens on the container's
	 * own loopback and reaches the proxy only through this socket. */
	if (req->net_dir) {
		if (strchr(req->net_dir, ',')) {
			pm_argv_free(a);
			sb_fail(err, "the proxy socket directory %s has a ',', which would end the --mount option",
				req->net_dir);
			return sb_hint(err, "set TMPDIR to a directory whose path has no ',' (or unset it: /tmp)");
		}
		r |= push(a, "--mount");
		r |= pushf(a, "type=bind,source=%s,target=%s,readonly=true", req->net_dir, SB_NET_MOUNT);
	}
	r |= push(a, "--workdir");
	r |= push(a, req->workspace_bytes ? SB_SANDBOX_WORKSPACE : SB_SANDBOX_WORKDIR);
	/* Stops: host secrets (API keys in the MCP client's environment)
	 * reaching the code. Exactly the sandbox allow-list goes in. */
	if (eng == PM_PODMAN)
		r |= push(a, "--unsetenv-all");
	for (const char *const *e = sb_sandbox_env(); *e; e++) {
		r |= push(a, "--env");
		r |= push(a, *e);
	}
	/* network set: the proxy variables (sb_sandbox_proxy_env). */
	for (const char *const *e = sb_sandbox_proxy_env(); req->net_dir && *e; e++) {
		r |= push(a, "--env");
		r |= push(a, *e);
	}
	/* Stops: code owning the image's files and running with the host
	 * user's own identity (container root = host user when rootless). */
	/* Stops, too: one job starving the others of what the kernel counts
	 * per uid (queued signals, processes), which would be shared by every
	 * container in podman's one user namespace: each container runs as a
	 * uid of its own (podman adds it to the container's /etc/passwd), in
	 * the configured user's group for the image's files. */
	char user[96];
	pm_user_arg(pm, uid, user, sizeof user);
	r |= push(a, "--user");
	r |= pushf(a, "%s", user);
	if (uid) {
		/* Its /etc/passwd line carries the configured user's name (and
		 * the sandbox's HOME), so `id -un` says sage, as before. */
		size_t n = strcspn(pm->container_user, ":");
		bool numeric = strspn(pm->container_user, "0123456789") >= n;
		r |= push(a, "--passwd-entry");
		r |= pushf(a, "%.*s:*:$UID:$GID:sagebox:/tmp/home:/bin/sh", numeric ? 7 : (int)n,
			   numeric ? "sandbox" : pm->container_user);
	}
	/* Stops: privileged kernel interfaces (mount, raw sockets, ptrace of
	 * other processes, chown tricks) and regaining privilege through
	 * setuid/file-capability binaries in the image. */
	r |= push(a, "--cap-drop=all");
	r |= push(a, "--security-opt");
	r |= push(a, "no-new-privileges");
	if (plan->seccomp_profile) {
		/* Stops: what the syscall policy table names (sandbox/policy.c):
		 * new namespaces, mounts, keyrings, ptrace, process_vm_*, file
		 * handles, message queues, inotify, ... which the engine's
		 * default profile allows. */
		r |= push(a, "--security-opt");
		r |= pushf(a, "seccomp=%s", plan->seccomp_profile);
	}
	/* Resource limits: fork bombs, memory exhaustion, CPU hogging, disk
	 * filling. Only flags the engine applies here (limits.c). */
	if (plan->use_cg_pids) {
		r |= push(a, "--pids-limit");
		r |= pushf(a, "%u", l->pids);
	}
	if (plan->use_cg_memory) {
		r |= push(a, "--memory");
		r |= push(a, l->memory);
		/* no swap on top of the memory limit */
		r |= push(a, "--memory-swap");
		r |= push(a, l->memory);
	}
	if (plan->use_cg_cpu) {
		r |= push(a, "--cpus");
		r |= pushf(a, "%g", l->cpus);
	}
	r |= push(a, "--ulimit");
	r |= pushf(a, "nofile=%u:%u", l->nofile, l->nofile);
	r |= push(a, "--ulimit");
	r |= pushf(a, "nproc=%u:%u", l->pids, l->pids);
	r |= push(a, "--ulimit");
	r |= pushf(a, "fsize=%llu:%llu", (unsigned long long)l->fsize_bytes, (unsigned long long)l->fsize_bytes);
	if (plan->use_rlimit_data) {
		/* The memory fallback where no memory cgroup is delegated.
		 * RLIMIT_DATA (private writable memory: heap, anonymous maps),
		 * not RLIMIT_AS: Sage reserves ~1.6 GB of address space for
		 * 200 MB resident and cannot even import under as=1g. */
		r |= push(a, "--ulimit");
		r |= pushf(a, "data=%llu:%llu", (unsigned long long)l->memory_bytes,
			   (unsigned long long)l->memory_bytes);
	}
	/* Stops: a job holding what is counted per host user (queued signals
	 * and timers, queue bytes, locked memory) and starving the user's own
	 * programs (user_resources.c). Each container runs as a uid of its
	 * own, so this is its share; the host user's count includes them all. */
	size_t nres;
	const struct sb_user_resource *res = sb_user_resources(&nres);
	for (size_t i = 0; i < nres; i++)
		if (res[i].kind == SB_URES_RLIMIT) {
			r |= push(a, "--ulimit");
			r |= pushf(a, "%s=%llu:%llu", res[i].name, (unsigned long long)res[i].value,
				   (unsigned long long)res[i].value);
		}
	/* Core dumps of a crashing Sage would be written into the tmpfs. */
	r |= push(a, "--ulimit");
	r |= push(a, "core=0:0");
	/* Output reaches us through the attach pipes; the engine keeps no log
	 * file of it, so a flood cannot fill the host's disk. */
	r |= push(a, "--log-driver=none");
	if (eng == PM_PODMAN && req->lifetime_s > 0) {
		/* Backstop: conmon kills the container at this age even when
		 * sagebox was killed and nobody is left to do it. */
		r |= push(a, "--timeout");
		r |= pushf(a, "%u", req->lifetime_s);
	}
	r |= push(a, "--entrypoint");
	r |= push(a, argv[0]);
	r |= push(a, "--");
	r |= push(a, image_ref);
	for (size_t i = 1; argv[i]; i++)
		r |= push(a, argv[i]);
	(void)info;
	if (r) {
		pm_argv_free(a);
		return sb_fail(err, "out of memory building the %s command", pm_engine_name(eng));
	}
	return 0;
}
