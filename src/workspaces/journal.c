/* A workspace's journal applied: after its sync commits, or again at the
 * next hold after a crash (journal.h). */
#include "workspaces/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fd.h"
#include "workspaces/fsafe.h"

static int apply_file(struct sb_ws *ws, int stage_fd, const char *rel, const char *stage)
{
	struct stat st;
	if (fstatat(stage_fd, stage, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1; /* moved in by an earlier apply */
	const char *slash = strrchr(rel, '/');
	char dir[SB_FS_REL_MAX + 1];
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - rel) : 0, rel);
	SB_AUTO_FD parent =
		slash ? sb_fs_mkdirs_beneath(ws->files_fd, dir, 0700, true) : fcntl(ws->files_fd, F_DUPFD_CLOEXEC, 0);
	const char *leaf = slash ? slash + 1 : rel;
	if (parent < 0)
		return -1;
	if (fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) && sb_fs_remove_at(parent, leaf))
		return -1;
	return renameat(stage_fd, stage, parent, leaf);
}

static int apply_del(struct sb_ws *ws, const char *rel)
{
	const char *leaf;
	SB_AUTO_FD parent = sb_fs_parent_beneath(ws->files_fd, rel, &leaf);
	if (parent < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	return sb_fs_remove_at(parent, leaf);
}

/* full: files/ moved aside to stage/old (once: a replay finds it there)
 * and made afresh. */
static int start_full(struct sb_ws *ws, int stage_fd)
{
	struct stat st;
	if (fstatat(stage_fd, "old", &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (renameat(ws->dir_fd, "files", stage_fd, "old") < 0 && errno != ENOENT)
			return -1;
	}
	if (mkdirat(ws->dir_fd, "files", 0700) < 0 && errno != EEXIST)
		return -1;
	int fd = sb_fs_open_beneath(ws->dir_fd, "files", O_PATH | O_DIRECTORY, 0);
	if (fd < 0)
		return -1;
	sb_close(&ws->files_fd);
	ws->files_fd = fd;
	return 0;
}

int sb_ws_journal_apply(struct sb_ws *ws, const json_t *j, struct sb_error *err)
{
	SB_AUTO_FD stage_fd = sb_fs_open_beneath(ws->dir_fd, "stage", O_PATH | O_DIRECTORY, 0);
	int rc = stage_fd < 0 ? -1 : 0;
	if (!rc && json_is_true(json_object_get(j, "full")))
		rc = start_full(ws, stage_fd);
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(j, "del"), i, v) {
		const char *p = json_string_value(v);
		if (!rc && p && sb_fs_relpath_ok(p))
			rc = apply_del(ws, p);
	}
	json_array_foreach(json_object_get(j, "dir"), i, v) {
		const char *p = json_string_value(json_array_get(v, 0));
		SB_AUTO_FD d = !rc && p && sb_fs_relpath_ok(p) ? sb_fs_mkdirs_beneath(ws->files_fd, p, 0700, true) : -2;
		if (d == -1)
			rc = -1;
	}
	json_array_foreach(json_object_get(j, "file"), i, v) {
		const char *p = json_string_value(json_array_get(v, 0)), *stage = json_string_value(json_array_get(v, 1));
		if (!rc && p && stage && sb_fs_relpath_ok(p) && sb_fs_relpath_ok(stage) && !strchr(stage, '/'))
			rc = apply_file(ws, stage_fd, p, stage);
	}
	/* Done: the journal goes first (the commit is then over), the rest
	 * of the stage after. */
	if (!rc && unlinkat(stage_fd, "journal", 0) < 0 && errno != ENOENT)
		rc = -1;
	if (rc)
		return sb_fail_errno(err, "cannot update workspace %s on disk (it is completed at its next open)",
				     ws->name);
	sb_fs_remove_at(ws->dir_fd, "stage");
	return 0;
}

int sb_ws_journal_recover(struct sb_ws *ws, struct sb_error *err)
{
	SB_AUTO_FD stage_fd = sb_fs_open_beneath(ws->dir_fd, "stage", O_PATH | O_DIRECTORY, 0);
	if (stage_fd < 0)
		return 0;
	struct stat st;
	SB_AUTO_FD jfd = sb_fs_open_regular(stage_fd, "journal", &st);
	json_t *j = jfd >= 0 && st.st_size < (64 << 20) ? json_loadfd(jfd, 0, NULL) : NULL;
	if (jfd >= 0 && !json_is_object(j)) {
		json_decref(j);
		return sb_fail(err, "workspace %s has a journal that cannot be read (%s/stage/journal)", ws->name,
			       ws->name);
	}
	int rc = j ? sb_ws_journal_apply(ws, j, err) : 0;
	json_decref(j);
	if (!rc && sb_fs_remove_at(ws->dir_fd, "stage") < 0)
		rc = sb_fail_errno(err, "cannot clear the stage of workspace %s", ws->name);
	return rc;
}
