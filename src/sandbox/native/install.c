/* A Sage installed outside the system directories (built in ~/sage or
 * /opt/sage-10.x, a conda environment): runner/sage/locate.c names its prefix
 * (sys.prefix, sys.base_prefix, the sage script's directory) and this binds
 * it read-only at the same path in every sandbox, the prefix only. Chosen
 * in the caller (nat_bind_install); opened and bound in init, as the
 * shares are (session_mounts.c). */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/native/native.h"

/* p is d or below it. */
static bool within(const char *p, const char *d)
{
	size_t n = strlen(d);
	return !strncmp(p, d, n) && (p[n] == '\0' || p[n] == '/' || (n == 1 && d[0] == '/'));
}

/* Why path may not be bound, or NULL. */
static const char *refusal(const char *path)
{
	/* The sandbox makes these itself (a bind there would shadow its own
	 * /tmp, /etc, /dev, a session's /work, the shares at /data). */
	static const char *const own[] = {"/tmp", "/proc", "/sys", "/dev", "/run", "/etc", SB_SANDBOX_WORKSPACE,
					  SB_SHARE_MOUNT, "/opt/sagebox"};
	for (size_t i = 0; i < sizeof own / sizeof *own; i++)
		if (within(path, own[i]))
			return "the sandbox has its own directory there: install Sage elsewhere (e.g. /opt)";
	const char *second = strchr(path + 1, '/');
	if (!second)
		return "a top-level directory is too broad: only an installation's own directory is bound";
	/* Never a home: a prefix inside one is fine, the home itself or a
	 * directory holding homes would show the user's files to the code. */
	struct passwd *pw;
	setpwent();
	while ((pw = getpwent()))
		if (pw->pw_dir && pw->pw_dir[0] == '/' && strcmp(pw->pw_dir, "/") && within(pw->pw_dir, path)) {
			endpwent();
			return "it is (or holds) a home directory: only an installation inside it may be bound";
		}
	endpwent();
	const char *home = getenv("HOME");
	if (home && home[0] == '/' && strcmp(home, "/") && within(home, path))
		return "it is (or holds) a home directory: only an installation inside it may be bound";
	return NULL;
}

static bool visible(const char *path)
{
	/* What mounts.c binds from the host anyway (after realpath, /bin and
	 * /lib of a merged-/usr system are /usr/...). */
	static const char *const sys[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
	for (size_t i = 0; i < sizeof sys / sizeof *sys; i++)
		if (within(path, sys[i]))
			return true;
	return false;
}

static void said_add(json_t *said, const char *path, const char *bind, const char *why)
{
	json_t *o = json_pack("{s:s, s:s}", "path", path, "bind", bind);
	if (why)
		json_object_set_new(o, "why", json_string(why));
	json_array_append_new(said, o);
}

int nat_bind_install(void *self, const char *const *paths, bool required, json_t *said, struct sb_error *err)
{
	struct nat_self *ns = self;
	for (size_t i = 0; paths[i]; i++) {
		if (!paths[i][0])
			continue;
		char real[PATH_MAX];
		struct stat st;
		if (!realpath(paths[i], real) || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
			if (required)
				return sb_fail_errno(err, "Sage's installation %s cannot be bound into the native sandbox",
						     paths[i]);
			said_add(said, paths[i], "refused", "not a directory here");
			continue;
		}
		if (visible(real)) {
			said_add(said, real, "visible", NULL);
			continue;
		}
		const char *why = refusal(real);
		if (why) {
			said_add(said, real, "refused", why);
			if (!required)
				continue;
			sb_fail(err, "Sage's installation %s cannot be bound into the native sandbox: %s", real, why);
			return sb_hint(err, "install Sage in a directory of its own (e.g. /opt/sage or ~/sage), or use "
					    "--backend podman with a Sage image");
		}
		/* Nested in one already bound: nothing to add; holding some:
		 * it replaces them. */
		bool covered = false;
		unsigned kept = 0;
		for (unsigned j = 0; j < ns->n_installs; j++) {
			if (within(real, ns->installs[j]))
				covered = true;
			if (covered || !within(ns->installs[j], real))
				memmove(ns->installs[kept++], ns->installs[j], PATH_MAX);
		}
		ns->n_installs = kept;
		if (!covered) {
			if (ns->n_installs == NAT_INSTALLS_MAX)
				return sb_fail(err, "more than %d directories of Sage's installation to bind", NAT_INSTALLS_MAX);
			snprintf(ns->installs[ns->n_installs++], PATH_MAX, "%s", real);
		}
		said_add(said, real, "bound", NULL);
	}
	return 0;
}

void nat_open_installs(const struct nat_plan *p, int fds[NAT_INSTALLS_MAX])
{
	nat_open_dirs(p->installs, p->n_installs, fds, "Sage's installation",
		      "the sandbox user must be able to read Sage's installation");
}

void nat_mount_installs(const struct nat_plan *p, const int fds[NAT_INSTALLS_MAX], const char *newroot)
{
	char dst[PATH_MAX], src[64];
	for (unsigned i = 0; i < p->n_installs; i++) {
		if (snprintf(dst, sizeof dst, "%s%s", newroot, p->installs[i]) >= (int)sizeof dst)
			nat_child_fail("mounts", ENAMETOOLONG, "%s", p->installs[i]);
		/* Its parents as empty directories of the root tmpfs: nothing
		 * beside the prefix (a home's other files) becomes visible. */
		for (char *s = dst + strlen(newroot) + 1; (s = strchr(s, '/')); s++) {
			*s = '\0';
			if (mkdir(dst, 0755) != 0 && errno != EEXIST)
				nat_child_fail("mounts", errno, "mkdir %s", dst);
			*s = '/';
		}
		if (mkdir(dst, 0755) != 0 && errno != EEXIST)
			nat_child_fail("mounts", errno, "mkdir %s", dst);
		snprintf(src, sizeof src, "/proc/self/fd/%d", fds[i]);
		/* Read-only, nosuid, nodev, every submount too (nat_bind). */
		nat_bind(src, dst, false);
		close(fds[i]);
	}
}

int nat_add_path(void *self, const char *dir)
{
	struct nat_self *ns = self;
	const char *const *env = sb_sandbox_env();
	const char *path = NULL;
	for (size_t i = 0; env[i] && !path; i++)
		if (!strncmp(env[i], "PATH=", 5))
			path = env[i] + 5;
	bool bound = false;
	for (unsigned i = 0; i < ns->n_installs && !bound; i++)
		bound = within(dir, ns->installs[i]);
	/* Only a directory the sandbox shows: a refused one stays off PATH. */
	if (!path || !bound || dir[0] != '/' || strchr(dir, ':'))
		return 0;
	const char *cur = ns->path_env[0] ? ns->path_env + 5 : path;
	size_t n = strlen(dir);
	for (const char *c = cur; *c; c += strcspn(c, ":"), c += *c == ':')
		if (strcspn(c, ":") == n && !strncmp(c, dir, n))
			return 0;
	char next[sizeof ns->path_env];
	/* after the dirs added before it: the sage script's dir leads */
	size_t added = ns->path_env[0] ? strlen(cur) - strlen(path) : 0;
	if (snprintf(next, sizeof next, "PATH=%.*s%s:%s", (int)added, cur, dir, path) >= (int)sizeof next)
		return 0;
	memcpy(ns->path_env, next, sizeof next);
	return 1;
}
