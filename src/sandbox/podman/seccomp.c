/* The seccomp profile our containers run with: the syscall policy compiled
 * onto the engine's default profile (seccomp_compile.c), written once per
 * process, content-addressed, into a private directory, and passed with
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

#include "util/fd.h"
#include "util/statedir.h"

#define PM_DEFAULT_PROFILE "/usr/share/containers/seccomp.json"

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
static int private_dir(char *out, size_t n, struct sb_error *err)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	char tmp[PATH_MAX];
	if (!base || !base[0]) {
		const char *home = getenv("HOME");
		if (!home || !home[0])
			return sb_fail(err, "neither XDG_RUNTIME_DIR nor HOME is set");
		snprintf(tmp, sizeof tmp, "%s/.cache", home);
		mkdir(tmp, 0700);
		base = tmp;
	}
	if ((size_t)snprintf(out, n, "%s/sagebox", base) >= n)
		return sb_fail(err, "%s/sagebox is too long", base);
	return sb_private_dir(out, err);
}

static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;
static char prof_path[PATH_MAX];
static char prof_error[PATH_MAX + 256];
static bool prof_tried;

/* Write text to dir/seccomp-<hash>.json (kept if already there). */
static int write_profile(const char *dir, const char *text, char *path, size_t n)
{
	snprintf(path, n, "%s/seccomp-%016llx.json", dir, (unsigned long long)fnv1a(text));
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		return 0;
	char tmpf[PATH_MAX];
	snprintf(tmpf, sizeof tmpf, "%s/.seccomp-%ld.tmp", dir, (long)getpid());
	SB_AUTO_FD fd = SB_RETRY_EINTR(open(tmpf, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
	if (fd < 0)
		return -1;
	if (sb_write_all(fd, text, strlen(text)) < 0 || fsync(fd) < 0 || rename(tmpf, path) < 0) {
		unlink(tmpf);
		return -1;
	}
	return 0;
}

const char *pm_seccomp_profile(const char *base_profile, char *why, size_t n)
{
	pthread_mutex_lock(&prof_lock);
	if (!prof_tried) {
		prof_tried = true;
		const char *base = base_profile && base_profile[0] ? base_profile : PM_DEFAULT_PROFILE;
		json_error_t je;
		json_t *p = json_load_file(base, 0, &je);
		char dir[PATH_MAX - 64], path[PATH_MAX];
		char *text = NULL;
		struct sb_error derr;
		if (!p)
			snprintf(prof_error, sizeof prof_error, "cannot read the engine's seccomp profile %s: %s", base,
				 je.text);
		else if (pm_seccomp_compile(p, prof_error, sizeof prof_error) < 0)
			;
		else if (private_dir(dir, sizeof dir, &derr) < 0)
			snprintf(prof_error, sizeof prof_error, "no private directory for the seccomp profile: %s",
				 derr.msg);
		else if (!(text = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS)))
			snprintf(prof_error, sizeof prof_error, "out of memory");
		else if (write_profile(dir, text, path, sizeof path) < 0)
			snprintf(prof_error, sizeof prof_error, "cannot write the seccomp profile into %s: %s", dir,
				 strerror(errno));
		else
			snprintf(prof_path, sizeof prof_path, "%s", path);
		free(text);
		json_decref(p);
	}
	if (!prof_path[0])
		snprintf(why, n, "%s", prof_error);
	pthread_mutex_unlock(&prof_lock);
	return prof_path[0] ? prof_path : NULL;
}
