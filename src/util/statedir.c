#include "util/statedir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int make_dirs(char *dir, struct sb_error *err)
{
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int rc = mkdir(dir, 0700);
		*p = '/';
		if (rc < 0 && errno != EEXIST)
			return sb_fail_errno(err, "cannot create %.*s", (int)(p - dir), dir);
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return sb_fail_errno(err, "cannot create %s", dir);
	return 0;
}

int sb_state_dir(char *dir, size_t size, struct sb_error *err)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	if (state && state[0] == '/')
		snprintf(dir, size, "%s/sagebox", state);
	else if (home && home[0] == '/')
		snprintf(dir, size, "%s/.local/state/sagebox", home);
	else
		return sb_fail(err, "neither XDG_STATE_HOME nor HOME is set, so sagebox has no state directory");
	return make_dirs(dir, err);
}

int sb_private_dir(const char *dir, struct sb_error *err)
{
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return sb_fail_errno(err, "cannot make %s", dir);
	struct stat st;
	if (lstat(dir, &st) < 0)
		return sb_fail_errno(err, "cannot stat %s", dir);
	if (!S_ISDIR(st.st_mode))
		return sb_fail(err, "%s is not a directory (a symlink?); remove it", dir);
	if (st.st_uid != geteuid())
		return sb_fail(err, "%s belongs to uid %ld, not to us", dir, (long)st.st_uid);
	if (st.st_mode & 077)
		return sb_fail(err, "%s has mode %03o: others may enter it; chmod 700 it", dir,
			       (unsigned)(st.st_mode & 0777));
	return 0;
}
