/* The podman and docker backends: spawn a container for one command, kill
 * it (client and container), wait for it and make sure it is gone. */
#include "sandbox/podman/podman.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/backends.h"
#include "util/fd.h"

#define PM_STR_(x) #x
#define PM_STR(x) PM_STR_(x)

struct pm_priv {
	enum pm_engine eng;
	char exe[PATH_MAX];
	char name[96];
	pthread_mutex_t lock;
	bool reaped;  /* the client's pid is reaped: never signal it again */
	bool killed;  /* kill() ran */
	bool removed; /* the container is known to be gone */
	int refs;     /* kill() calls in progress (under priv_lock) */
	bool waited;  /* wait() is done with it; the last user frees it */
};

/* kill() may run on another thread than wait() (a pool shutting down
 * while a job ends): priv is freed by whichever finishes last. */
static pthread_mutex_t priv_lock = PTHREAD_MUTEX_INITIALIZER;

static void priv_free(struct pm_priv *p)
{
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* The image's ID, cached like the engine info: one inspect per 30 s, not
 * per run. The container starts from the ID we inspected, so what we
 * report is what runs, even if the tag is moved meanwhile. */
static pthread_mutex_t img_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool valid;
	time_t at;
	enum pm_engine eng;
	char exe[PATH_MAX];
	char image[512];
	struct pm_image img;
} img_cache;

static int image_get(const struct pm_self *pm, struct pm_image *img, struct sb_error *err)
{
	const enum pm_engine eng = pm->eng;
	const char *exe = pm->exe;
	time_t now = time(NULL);
	pthread_mutex_lock(&img_lock);
	if (img_cache.valid && img_cache.eng == eng && now >= img_cache.at && now - img_cache.at < PM_INFO_TTL_S &&
	    strcmp(img_cache.exe, exe) == 0 && strcmp(img_cache.image, pm->image) == 0) {
		*img = img_cache.img;
		pthread_mutex_unlock(&img_lock);
		return 0;
	}
	pthread_mutex_unlock(&img_lock);
	if (pm_image_inspect(pm, img, err) < 0)
		return -1;
	pthread_mutex_lock(&img_lock);
	img_cache.valid = img->present; /* a missing image is looked up again */
	img_cache.at = now;
	img_cache.eng = eng;
	snprintf(img_cache.exe, sizeof img_cache.exe, "%s", exe);
	snprintf(img_cache.image, sizeof img_cache.image, "%s", pm->image);
	img_cache.img = *img;
	pthread_mutex_unlock(&img_lock);
	return 0;
}

/* With a network list: the relay and the socket directory, said where the
 * result says what the sandbox enforces and what of the host it shows (its
 * host path is in /proc/self/mountinfo, as every bind's). */
static void net_said(json_t *enforced)
{
	json_object_set_new(enforced, "network",
			    json_string("loopback only (--network=none); the allow-list proxy's relay on 127.0.0.1:" PM_STR(SB_NET_PORT) ", "
					"its socket bound read-only at " SB_NET_MOUNT));
	const char *was = json_string_value(json_object_get(enforced, "host_mounts"));
	char hm[512];
	snprintf(hm, sizeof hm, "its proxy socket directory at " SB_NET_MOUNT " (read-only); else %s", was ? was : "none");
	json_object_set_new(enforced, "host_mounts", json_string(hm));
	json_array_append_new(json_object_get(json_object_get(enforced, "host_details"), "visible"),
			      json_string("/proc/self/mountinfo: the host path of its proxy socket directory "
					  "(TMPDIR/sagebox-net-XXXXXX/ID), bound at " SB_NET_MOUNT));
}

int pm_spawn(const struct pm_self *pm, const struct sb_sandbox_req *req,
	     struct sb_sandbox *sb, struct sb_error *err)
{
	const enum pm_engine eng = pm->eng;
	sb->pid = -1;
	sb->stdin_fd = sb->stdout_fd = sb->stderr_fd = -1;
	sb->enforced = NULL;
	sb->priv = NULL;
	const struct sb_limits *l = req->limits ? req->limits : &pm->limits;
	struct sb_sandbox_req full = *req;
	full.limits = l;

	/* Refuse a rootful engine: a container escape there is host root. */
	struct pm_info info;
	if (pm_info_get(pm, &info, err) < 0)
		return -1;
	if (!info.rootless)
		return pm_refuse_not_rootless(pm, &info, err);
	/* What a SIGKILLed sagebox left behind goes first. */
	pm_cleanup_orphans_once(pm);

	struct pm_image img;
	if (image_get(pm, &img, err) < 0)
		return -1;
	if (!img.present)
		return pm_refuse_missing_image(pm, err);

	struct pm_plan plan;
	pm_plan_limits(&info, &plan);
	/* The syscall policy is part of the sandbox: no container without it
	 * where the engine could have applied it. */
	if (plan.seccomp_error[0]) {
		sb_fail(err, "cannot apply sagebox's syscall policy: %s", plan.seccomp_error);
		return sb_hint(err, "check that %s is readable and $XDG_RUNTIME_DIR is a private directory",
			       info.seccomp_profile[0] ? info.seccomp_profile : "/usr/share/containers/seccomp.json");
	}
	/* docker adds no /etc/passwd entry for an unknown uid: there the
	 * configured user runs every container. */
	unsigned uid = eng == PM_PODMAN ? pm_container_uid(info.uid_top) : 0;
	if (eng == PM_PODMAN && !uid) {
		sb_fail(err, "podman maps only container uids 0-%u for this user; sagebox runs each container as a "
			     "uid of its own from %u on (so that no container shares another's per-uid kernel counts)",
			info.uid_top ? info.uid_top - 1 : 0, PM_UID_FIRST);
		sb_hint(err, "give the user subordinate ids: sudo usermod --add-subuids 100000-165535 "
			     "--add-subgids 100000-165535 $USER, then podman system migrate");
		return -1;
	}
	/* A project folder's session runs as the host user (keep-id:uid=N in
	 * args.c), so N is the user's own uid there, not one of its own; and
	 * podman copies the whole image once per id mapping (its size on disk,
	 * kept until the image is removed), so a random N per session filled
	 * the disk a copy at a time. One fixed N: the copy is made once. */
	if (uid && pm_binds_project(&full))
		uid = PM_PROJECT_UID;
	struct pm_priv *p = calloc(1, sizeof *p);
	if (!p)
		return sb_fail_errno(err, "out of memory");
	p->eng = eng;
	snprintf(p->exe, sizeof p->exe, "%s", pm->exe);
	pm_container_name(p->name, sizeof p->name);
	pthread_mutex_init(&p->lock, NULL);

	struct pm_argv a;
	if (pm_build_run_argv(pm, &info, &plan, p->name, pm_owner_self(), img.id, &full, uid, &a, err) < 0)
		goto fail;
	int fds[3];
	int rc = pm_spawn_piped(p->exe, a.v, eng, &sb->pid, fds, err);
	pm_argv_free(&a);
	if (rc < 0)
		goto fail;
	sb->stdin_fd = fds[0];
	sb->stdout_fd = fds[1];
	sb->stderr_fd = fds[2];
	sb->priv = p;
	sb->enforced = pm_enforced_json(pm, &info, &plan, &img, l, uid);
	if (req->net_dir)
		net_said(sb->enforced);
	if (pm_binds_project(req)) {
		json_object_set_new(sb->enforced, "user",
				    json_sprintf("uid %u, mapped to the host user (the project folder's files are "
						 "theirs), group of %s", uid, pm->container_user));
		json_object_set_new(sb->enforced, "project",
				    json_pack("{s:s, s:s, s:s}", "path", SB_PROJECT_MOUNT, "mount",
					      req->project_exec ? "read-write, nosuid, nodev" : "read-write, nosuid, nodev, noexec",
					      "no_links_or_devices",
					      "the driver's Landlock domain: no symlink, FIFO, socket or device node can be "
					      "made there (nor in /work), where the kernel has Landlock"));
	}
	json_object_set_new(sb->enforced, "container",
			    json_pack("{s:s, s:s}", "name", p->name, "owner", pm_owner_self()));
	return 0;
fail:
	pthread_mutex_destroy(&p->lock);
	free(p);
	return -1;
}

void pm_kill(struct sb_sandbox *sb)
{
	pthread_mutex_lock(&priv_lock);
	struct pm_priv *p = sb->priv;
	if (p)
		p->refs++;
	pthread_mutex_unlock(&priv_lock);
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	/* The client first: it must not go on feeding the container. Only
	 * while unreaped, so a reused pid is never hit. */
	if (!p->reaped && sb->pid > 0)
		kill(sb->pid, SIGKILL);
	bool first = !p->killed;
	p->killed = true;
	pthread_mutex_unlock(&p->lock);
	if (first) {
		/* Killing the client does not stop the container: conmon
		 * keeps it running. Kill it and remove it by name. */
		pm_kill_container(p->exe, p->eng, p->name);
		if (pm_remove(p->exe, p->eng, p->name) == 0) {
			pthread_mutex_lock(&p->lock);
			p->removed = true;
			pthread_mutex_unlock(&p->lock);
		}
	}
	pthread_mutex_lock(&priv_lock);
	bool last = --p->refs == 0 && p->waited;
	pthread_mutex_unlock(&priv_lock);
	if (last)
		priv_free(p);
}

int pm_wait(struct sb_sandbox *sb, struct sb_exit *ex, struct sb_error *err)
{
	struct pm_priv *p = sb->priv;
	ex->exit_code = -1;
	ex->signal = 0;
	if (!p)
		return sb_fail(err, "internal: wait on a sandbox that was not started or already waited for");
	/* Wait without reaping, then reap under the lock: kill() never
	 * signals a pid that could already belong to someone else. */
	siginfo_t si;
	SB_RETRY_EINTR(waitid(P_PID, (id_t)sb->pid, &si, WEXITED | WNOWAIT));
	int st = 0;
	pthread_mutex_lock(&p->lock);
	pid_t r = SB_RETRY_EINTR(waitpid(sb->pid, &st, 0));
	p->reaped = true;
	bool removed = p->removed;
	pthread_mutex_unlock(&p->lock);
	int ret = 0;
	if (r < 0) {
		ret = sb_fail_errno(err, "cannot wait for %s (pid %ld)", p->exe, (long)sb->pid);
	} else if (WIFSIGNALED(st)) {
		ex->signal = WTERMSIG(st);
	} else if (WIFEXITED(st)) {
		int c = WEXITSTATUS(st);
		/* podman/docker run exit with 128+N when the container's
		 * command died of signal N. */
		if (c > 128 && c <= 128 + 64) {
			ex->signal = c - 128;
		} else {
			ex->exit_code = c;
		}
	}
	/* `run --rm` removed it on a normal exit; make sure, whatever
	 * happened (a killed client leaves a running container behind). */
	if (!removed && pm_remove(p->exe, p->eng, p->name) < 0 && ret == 0) {
		ret = sb_fail(err, "container %s could not be removed", p->name);
		sb_hint(err, "remove it by hand: %s rm -f %s", p->exe, p->name);
	}
	pthread_mutex_lock(&priv_lock);
	sb->priv = NULL;
	p->waited = true;
	bool last = p->refs == 0;
	pthread_mutex_unlock(&priv_lock);
	if (last)
		priv_free(p);
	return ret;
}

static void *pm_open(const struct sb_backend_settings *s, enum pm_engine eng, struct sb_error *err)
{
	struct pm_self *pm = calloc(1, sizeof *pm);
	if (!pm) {
		sb_fail(err, "out of memory");
		return NULL;
	}
	pm->eng = eng;
	snprintf(pm->exe, sizeof pm->exe, "%s", pm_exe_for(s->engine, eng));
	snprintf(pm->image, sizeof pm->image, "%s", s->image ? s->image : "");
	snprintf(pm->container_user, sizeof pm->container_user, "%s", s->container_user ? s->container_user : "");
	for (unsigned i = 0; i < s->n_shares && i < SB_SHARES_MAX; i++)
		snprintf(pm->shares[pm->n_shares++], PATH_MAX, "%s", s->shares[i]);
	snprintf(pm->packages, sizeof pm->packages, "%s", s->packages);
	pm->limits = s->limits;
	return pm;
}

static void *podman_open(const struct sb_backend_settings *s, struct sb_error *err)
{
	return pm_open(s, PM_PODMAN, err);
}

static void *docker_open(const struct sb_backend_settings *s, struct sb_error *err)
{
	return pm_open(s, PM_DOCKER, err);
}

static void pm_close(void *self)
{
	free(self);
}

static json_t *pm_status_op(void *self)
{
	return pm_status(self);
}

static int pm_spawn_op(void *self, const struct sb_sandbox_req *req, struct sb_sandbox *sb, struct sb_error *err)
{
	return pm_spawn(self, req, sb, err);
}

static int pm_image_build_op(void *self, const struct sb_image_recipe *r)
{
	return pm_image_build(self, r);
}

/* What Sage's Python in the image depends on: the image itself, by ID (a
 * tag moved to another build is asked again). */
static int pm_locate_key(void *self, char *key, size_t n, struct sb_error *err)
{
	const struct pm_self *pm = self;
	/* The refusals a spawn would make, first and in its words. */
	struct pm_info info;
	if (pm_info_get(pm, &info, err) < 0)
		return -1;
	if (!info.rootless)
		return pm_refuse_not_rootless(pm, &info, err);
	struct pm_image img;
	if (image_get(pm, &img, err) < 0)
		return -1;
	if (!img.present)
		return pm_refuse_missing_image(pm, err);
	snprintf(key, n, "image %s (id %s)", pm->image, img.id);
	return 0;
}

/* Podman and Docker share every operation but the opening (which engine). */
#define PM_OPS(opener)                                                                                          \
	{.open = opener, .close = pm_close, .status = pm_status_op, .spawn = pm_spawn_op, .kill = pm_kill,       \
	 .wait = pm_wait, .image_build = pm_image_build_op, .locate_key = pm_locate_key}

const struct sb_backend_ops sb_podman_ops = PM_OPS(podman_open);
const struct sb_backend_ops sb_docker_ops = PM_OPS(docker_open);
