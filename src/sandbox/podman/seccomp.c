/* A stricter seccomp profile than the engine's default.
 *
 * containers-common's default profile (podman's, and what we hand docker)
 * allows unshare, setns, mount, keyctl, ptrace, clone with namespace flags
 * and clone3 to every container, so that nested containers work. Code in
 * our sandbox needs none of that, and new user namespaces are the classic
 * door to kernel attack surface that is otherwise root-only (nf_tables,
 * overlayfs, mount-API bugs: the bulk of recent local privilege
 * escalations). We derive a profile from the engine's default that:
 *   - drops unshare, setns, mount, umount2, pivot_root, keyctl, add_key,
 *     request_key, ptrace, clone3 (glibc falls back to clone on ENOSYS);
 *   - allows clone only without CLONE_NEW* flags (threads and fork work).
 * The file is content-addressed in a private directory and passed with
 * --security-opt seccomp=PATH (read by the engine, not mounted). */
#include "sandbox/podman/podman.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PM_DEFAULT_PROFILE "/usr/share/containers/seccomp.json"

/* CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET (and NEWTIME) */
#define PM_CLONE_NS_MASK 0x7E020080ull

static const char *const denied[] = {
	"unshare", "setns",   "mount",       "umount",  "umount2", "pivot_root", "keyctl",
	"add_key", "request_key", "ptrace", "clone3",  "clone", "fsopen",  "fsmount",
	"move_mount", "open_tree", "fsconfig", "fspick", "mount_setattr", NULL,
};

static bool is_denied(const char *name)
{
	for (size_t i = 0; denied[i]; i++)
		if (strcmp(name, denied[i]) == 0)
			return true;
	return false;
}

/* Remove the denied names from every ALLOW rule of the profile. */
static void strip_allows(json_t *syscalls)
{
	size_t i;
	json_t *rule;
	json_array_foreach(syscalls, i, rule) {
		const char *action = json_string_value(json_object_get(rule, "action"));
		if (!action || strcmp(action, "SCMP_ACT_ALLOW") != 0)
			continue;
		json_t *names = json_object_get(rule, "names");
		for (size_t k = json_array_size(names); k-- > 0;) {
			const char *n = json_string_value(json_array_get(names, k));
			if (n && is_denied(n))
				json_array_remove(names, k);
		}
	}
}

static json_t *clone_rule(int index, bool s390)
{
	json_t *r = json_pack("{s:[s], s:s, s:[{s:i, s:I, s:I, s:s}]}", "names", "clone", "action",
			      "SCMP_ACT_ALLOW", "args", "index", index, "value", (json_int_t)PM_CLONE_NS_MASK,
			      "valueTwo", (json_int_t)0, "op", "SCMP_CMP_MASKED_EQ");
	/* s390 passes clone's flags as the second argument */
	json_object_set_new(r, s390 ? "includes" : "excludes", json_pack("{s:[s, s]}", "arches", "s390", "s390x"));
	return r;
}

/* The denied calls fail with EPERM, as under Docker's profile (programs
 * read ENOSYS as "this kernel is too old"), except clone3: glibc falls back
 * to clone only on ENOSYS. */
static json_t *eperm_rule(void)
{
	json_t *names = json_array();
	for (size_t i = 0; denied[i]; i++)
		if (strcmp(denied[i], "clone") != 0 && strcmp(denied[i], "clone3") != 0)
			json_array_append_new(names, json_string(denied[i]));
	return json_pack("{s:o, s:s, s:i}", "names", names, "action", "SCMP_ACT_ERRNO", "errnoRet", 1);
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

/* $XDG_RUNTIME_DIR/sagebox (or ~/.cache/sagebox): ours, 0700, no symlink.
 * Stops: another local user swapping the profile for a permissive one. */
static int private_dir(char *out, size_t n)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	char tmp[PATH_MAX];
	if (!base || !base[0]) {
		const char *home = getenv("HOME");
		if (!home || !home[0])
			return -1;
		snprintf(tmp, sizeof tmp, "%s/.cache", home);
		mkdir(tmp, 0700);
		base = tmp;
	}
	if ((size_t)snprintf(out, n, "%s/sagebox", base) >= n)
		return -1;
	if (mkdir(out, 0700) < 0 && errno != EEXIST)
		return -1;
	struct stat st;
	if (lstat(out, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -1;
	return 0;
}

static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;
static char prof_path[PATH_MAX];
static bool prof_tried;

const char *pm_seccomp_profile(const char *base_profile)
{
	pthread_mutex_lock(&prof_lock);
	if (prof_tried) {
		pthread_mutex_unlock(&prof_lock);
		return prof_path[0] ? prof_path : NULL;
	}
	prof_tried = true;
	json_t *p = json_load_file(base_profile && base_profile[0] ? base_profile : PM_DEFAULT_PROFILE, 0, NULL);
	json_t *syscalls = json_object_get(p, "syscalls");
	char dir[PATH_MAX - 64];
	char *text = NULL;
	if (!json_is_array(syscalls) || private_dir(dir, sizeof dir) < 0)
		goto out;
	strip_allows(syscalls);
	json_array_append_new(syscalls, clone_rule(0, false));
	json_array_append_new(syscalls, clone_rule(1, true));
	json_array_append_new(syscalls, eperm_rule());
	text = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text)
		goto out;
	char path[PATH_MAX], tmpf[PATH_MAX];
	snprintf(path, sizeof path, "%s/seccomp-%016llx.json", dir, (unsigned long long)fnv1a(text));
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()) {
		snprintf(prof_path, sizeof prof_path, "%s", path);
		goto out;
	}
	snprintf(tmpf, sizeof tmpf, "%s/.seccomp-%ld.tmp", dir, (long)getpid());
	int fd = open(tmpf, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		goto out;
	size_t len = strlen(text), off = 0;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	if (close(fd) == 0 && off == len && rename(tmpf, path) == 0)
		snprintf(prof_path, sizeof prof_path, "%s", path);
	else
		unlink(tmpf);
out:
	free(text);
	json_decref(p);
	pthread_mutex_unlock(&prof_lock);
	return prof_path[0] ? prof_path : NULL;
}
