/* What the engine says about this host: rootless or not, cgroup version and
 * controllers, OCI runtime, storage driver. One `podman info --format json`
 * (or `docker info --format '{{json .}}'`) per PM_INFO_TTL_S seconds per
 * process: the call costs a few hundred milliseconds, and rootless mode
 * cannot change under a running process (only a new login or a different
 * DOCKER_HOST changes it, and the environment is read once). */
#include "sandbox/podman/podman.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/unix_socket.h"

static pthread_mutex_t info_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool valid;
	time_t at;
	enum pm_engine eng;
	char exe[PATH_MAX];
	struct pm_info info;
} cache;

static json_t *jget(json_t *o, const char *path)
{
	char key[64];
	const char *p = path;
	while (o && *p) {
		size_t n = strcspn(p, ".");
		if (n >= sizeof key)
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		o = json_object_get(o, key);
		p += n;
		if (*p == '.')
			p++;
	}
	return o;
}

static const char *jstr(json_t *o, const char *path)
{
	json_t *v = jget(o, path);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static void copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
	/* first line only (runc's version is multi-line) */
	dst[strcspn(dst, "\n")] = '\0';
}

static bool array_has(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v) {
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return true;
	}
	return false;
}

/* The end of the run of container uids mapped from 0 on: each container runs
 * as a uid of its own below it (owner.c). 0 when podman does not say. */
static unsigned uid_top(json_t *map)
{
	unsigned top = 0;
	for (bool grew = true; grew && json_array_size(map);) {
		grew = false;
		size_t i;
		json_t *m;
		json_array_foreach(map, i, m) {
			json_int_t from = json_integer_value(json_object_get(m, "container_id"));
			json_int_t size = json_integer_value(json_object_get(m, "size"));
			if (from >= 0 && size > 0 && from <= (json_int_t)top && from + size > (json_int_t)top &&
			    from + size <= (json_int_t)UINT32_MAX) {
				top = (unsigned)(from + size);
				grew = true;
			}
		}
	}
	return top;
}

static void parse_podman(json_t *j, struct pm_info *in)
{
	json_t *rl = jget(j, "host.security.rootless");
	in->rootless = json_is_true(rl);
	snprintf(in->rootless_how, sizeof in->rootless_how, "podman info: host.security.rootless = %s",
		 json_is_boolean(rl) ? (in->rootless ? "true" : "false") : "missing");
	copy(in->version, sizeof in->version, jstr(j, "version.Version"));
	copy(in->oci_runtime, sizeof in->oci_runtime, jstr(j, "host.ociRuntime.name"));
	copy(in->storage_driver, sizeof in->storage_driver, jstr(j, "store.graphDriverName"));
	copy(in->cgroup_manager, sizeof in->cgroup_manager, jstr(j, "host.cgroupManager"));
	const char *cv = jstr(j, "host.cgroupVersion");
	in->cgroup_version = cv ? (strcmp(cv, "v2") == 0 ? 2 : strcmp(cv, "v1") == 0 ? 1 : 0) : 0;
	/* The controllers delegated to this user. Rootless on cgroup v1 gets
	 * none: podman then prints "Resource limits are not supported and
	 * ignored on cgroups V1 rootless systems" and runs without them. */
	json_t *ctl = jget(j, "host.cgroupControllers");
	if (json_is_array(ctl)) {
		in->cg_memory = array_has(ctl, "memory");
		in->cg_pids = array_has(ctl, "pids");
		in->cg_cpu = array_has(ctl, "cpu");
	} else {
		/* Older podman: root on any cgroup version, rootless only on v2. */
		bool ok = !in->rootless || in->cgroup_version == 2;
		in->cg_memory = in->cg_pids = in->cg_cpu = ok;
	}
	in->seccomp = json_is_true(jget(j, "host.security.seccompEnabled"));
	copy(in->seccomp_profile, sizeof in->seccomp_profile, jstr(j, "host.security.seccompProfilePath"));
	in->apparmor = json_is_true(jget(j, "host.security.apparmorEnabled"));
	in->selinux = json_is_true(jget(j, "host.security.selinuxEnabled"));
	in->uid_top = uid_top(jget(j, "host.idMappings.uidmap"));
}

/* The daemon behind a unix socket runs as the uid SO_PEERCRED reports. If
 * that is our own non-root uid, the daemon has no more privilege than we
 * do: a rootless daemon by construction. */
static bool socket_peer_is_self(const char *docker_host, char *how, size_t n)
{
	const char *path = "/var/run/docker.sock";
	if (docker_host && docker_host[0]) {
		if (strncmp(docker_host, "unix://", 7) != 0)
			return false;
		path = docker_host + 7;
	}
	int fd = sb_unix_connect(path, 0);
	if (fd < 0)
		return false;
	bool ok = false;
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && cr.uid == getuid() && cr.uid != 0) {
		ok = true;
		snprintf(how, n, "the daemon behind %s runs as uid %u (this user, not root)", path, (unsigned)cr.uid);
	}
	close(fd);
	return ok;
}

static void parse_docker(json_t *j, struct pm_info *in)
{
	json_t *sec = json_object_get(j, "SecurityOptions");
	in->rootless = false;
	size_t i;
	json_t *v;
	json_array_foreach(sec, i, v) {
		const char *s = json_string_value(v);
		if (s && (strcmp(s, "name=rootless") == 0 || strncmp(s, "name=rootless,", 14) == 0))
			in->rootless = true;
		if (s && strncmp(s, "name=seccomp", 12) == 0)
			in->seccomp = true;
		if (s && strncmp(s, "name=apparmor", 13) == 0)
			in->apparmor = true;
		if (s && strncmp(s, "name=selinux", 12) == 0)
			in->selinux = true;
	}
	if (in->rootless)
		snprintf(in->rootless_how, sizeof in->rootless_how, "docker info: SecurityOptions has name=rootless");
	else if (socket_peer_is_self(getenv("DOCKER_HOST"), in->rootless_how, sizeof in->rootless_how))
		in->rootless = true;
	else
		snprintf(in->rootless_how, sizeof in->rootless_how,
			 "docker info: SecurityOptions lacks name=rootless and the daemon socket is not this user's");
	copy(in->version, sizeof in->version, jstr(j, "ServerVersion"));
	copy(in->oci_runtime, sizeof in->oci_runtime, jstr(j, "DefaultRuntime"));
	copy(in->storage_driver, sizeof in->storage_driver, jstr(j, "Driver"));
	copy(in->cgroup_manager, sizeof in->cgroup_manager, jstr(j, "CgroupDriver"));
	const char *cv = jstr(j, "CgroupVersion");
	in->cgroup_version = cv ? atoi(cv) : 0;
	/* Docker reports what its daemon can limit; a rootless daemon on
	 * cgroup v1 cannot limit anything, whatever these flags say. */
	bool v1_rootless = in->rootless && in->cgroup_version != 2;
	in->cg_memory = json_is_true(json_object_get(j, "MemoryLimit")) && !v1_rootless;
	in->cg_pids = json_is_true(json_object_get(j, "PidsLimit")) && !v1_rootless;
	in->cg_cpu = json_is_true(json_object_get(j, "CpuCfsQuota")) && !v1_rootless;
}

static int query(const struct pm_self *pm, struct pm_info *in, struct sb_error *err)
{
	const enum pm_engine eng = pm->eng;
	const char *exe = pm->exe;
	const char *pargv[] = {exe, "--log-level=error", "info", "--format", "json", NULL};
	const char *dargv[] = {exe, "info", "--format", "{{json .}}", NULL};
	struct pm_out o;
	pm_run(exe, eng == PM_DOCKER ? dargv : pargv, eng, PM_HELPER_TIMEOUT_MS, &o);
	if (o.spawn_errno == ENOENT) {
		pm_out_free(&o);
		sb_fail(err, "%s executable '%s' not found", pm_engine_name(eng), exe);
		return sb_hint(err, "install it (Debian: apt install %s) or point --podman at it",
			       eng == PM_DOCKER ? "docker.io" : "podman");
	}
	if (o.spawn_errno || o.timed_out || !WIFEXITED(o.status) || WEXITSTATUS(o.status) != 0) {
		char d[512];
		pm_out_describe(&o, d, sizeof d);
		pm_out_free(&o);
		sb_fail(err, "'%s info' failed (%s)", exe, d);
		if (eng == PM_DOCKER)
			return sb_hint(err, "is the Docker daemon running and DOCKER_HOST set? Check with: %s info", exe);
		return sb_hint(err, "check with: %s info (as the user that runs sagebox, not with sudo)", exe);
	}
	json_error_t je;
	json_t *j = json_loads(o.out, 0, &je);
	pm_out_free(&o);
	if (!json_is_object(j)) {
		json_decref(j);
		return sb_fail(err, "cannot read '%s info' output: %s", exe, je.text);
	}
	memset(in, 0, sizeof *in);
	if (eng == PM_DOCKER)
		parse_docker(j, in);
	else
		parse_podman(j, in);
	json_decref(j);
	if (eng == PM_DOCKER) {
		/* podman's Docker API takes `seccomp=` as a file path, while
		 * the docker CLI sends the profile's content: find out. */
		const char *vargv[] = {exe, "version", "--format", "{{range .Server.Components}}{{.Name}};{{end}}",
				       NULL};
		struct pm_out v;
		if (pm_run(exe, vargv, eng, PM_HELPER_TIMEOUT_MS, &v) == 0 && strstr(v.out, "Podman Engine"))
			in->docker_api_is_podman = true;
		pm_out_free(&v);
	}
	return 0;
}

int pm_info_get(const struct pm_self *pm, struct pm_info *info, struct sb_error *err)
{
	const enum pm_engine eng = pm->eng;
	const char *exe = pm->exe;
	time_t now = time(NULL);
	pthread_mutex_lock(&info_lock);
	if (cache.valid && cache.eng == eng && strcmp(cache.exe, exe) == 0 && now >= cache.at &&
	    now - cache.at < PM_INFO_TTL_S) {
		*info = cache.info;
		pthread_mutex_unlock(&info_lock);
		return 0;
	}
	pthread_mutex_unlock(&info_lock);
	struct pm_info fresh;
	if (query(pm, &fresh, err) < 0)
		return -1;
	pthread_mutex_lock(&info_lock);
	/* Only a rootless answer is cached: a refusal is re-checked on the
	 * next call, so fixing the setup takes effect at once. */
	cache.valid = fresh.rootless;
	cache.at = now;
	cache.eng = eng;
	snprintf(cache.exe, sizeof cache.exe, "%s", exe);
	cache.info = fresh;
	pthread_mutex_unlock(&info_lock);
	*info = fresh;
	return 0;
}

int pm_refuse_not_rootless(const struct pm_self *pm, const struct pm_info *info,
			   struct sb_error *err)
{
	const enum pm_engine eng = pm->eng;
	const char *exe = pm->exe;
	if (eng == PM_DOCKER) {
		sb_fail(err, "refusing to run: Docker is not confirmed to be rootless (%s); a rootful daemon "
			     "runs containers as host root, one kernel bug away from owning this machine",
			info->rootless_how);
		return sb_hint(err, "use rootless Docker (dockerd-rootless-setuptool.sh install, then "
				    "DOCKER_HOST=unix://$XDG_RUNTIME_DIR/docker.sock) or podman's Docker API "
				    "(podman system service, DOCKER_HOST=unix://$XDG_RUNTIME_DIR/podman/podman.sock); "
				    "check with: %s info --format '{{.SecurityOptions}}' (it must list name=rootless)",
			       exe);
	}
	sb_fail(err, "refusing to run: Podman reports rootless=false (%s); rootful containers run as "
		     "host root, one kernel bug away from owning this machine",
		info->rootless_how);
	return sb_hint(err, "run sagebox as a normal user, not as root or with sudo (rootless Podman needs "
			    "that user's ranges in /etc/subuid and /etc/subgid); check with: %s info --format "
			    "'{{.Host.Security.Rootless}}' (it must print true)",
		       exe);
}
