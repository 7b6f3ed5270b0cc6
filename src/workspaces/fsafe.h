/* File operations that stay beneath one directory and never follow a link,
 * for the workspaces kept on disk (store.h) and the directories the user
 * names for export and import. The host writes there what a sandbox sent
 * and reads there what it sends into one; the rules below are what keeps a
 * name the sandbox chose, or an entry someone put into the store by hand,
 * from leading the host anywhere else:
 *
 *   - every path is relative, checked (sb_fs_relpath_ok) and resolved by
 *     openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 *     RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV from the directory's fd (on
 *     a kernel without openat2: component by component with O_NOFOLLOW),
 *     so no symlink is followed at any step, no step leaves the directory
 *     and no mount is crossed;
 *   - a file is opened for reading only once fstat of an O_PATH descriptor
 *     said it is a regular file (an O_PATH open runs no driver code: a
 *     device or FIFO is never opened);
 *   - files are created with O_CREAT | O_EXCL under names of our own, and
 *     only regular files and directories are ever made;
 *   - a tree is removed with unlinkat from directory fds opened with
 *     O_NOFOLLOW on the same device: a symlink inside is removed, never
 *     followed. */
#ifndef SAGEBOX_WORKSPACES_FSAFE_H
#define SAGEBOX_WORKSPACES_FSAFE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The longest relative path (bytes) and name a workspace holds: Linux's own
 * limits (PATH_MAX with its NUL, NAME_MAX). */
#define SB_FS_REL_MAX 4095
#define SB_FS_NAME_MAX 255

/* A relative path the workspace tools accept: not empty, not absolute, no
 * empty, "." or ".." component, each component at most SB_FS_NAME_MAX
 * bytes, at most SB_FS_REL_MAX bytes, valid UTF-8 without control
 * characters (it travels in JSON and is shown to people). */
bool sb_fs_relpath_ok(const char *p);

/* Open rel beneath dirfd (rules above); flags gain O_NOFOLLOW and
 * O_CLOEXEC. -1 with errno: ELOOP or EXDEV for a symlink or a way out,
 * ENOENT, ... */
int sb_fs_open_beneath(int dirfd, const char *rel, int flags, mode_t mode);

/* The directory that holds rel's last component, opened beneath dirfd
 * (O_PATH); *leaf points at that component inside rel. -1 with errno. */
int sb_fs_parent_beneath(int dirfd, const char *rel, const char **leaf);

/* rel beneath dirfd opened for reading when it is a regular file: its fd,
 * st filled. -1 with errno (ENXIO: it is something else, st says what;
 * nothing but an O_PATH descriptor was opened). */
int sb_fs_open_regular(int dirfd, const char *rel, struct stat *st);

/* mkdir -p of rel beneath dirfd, each directory made with mode; returns
 * the last one opened O_PATH | O_DIRECTORY, or -1 with errno (ENOTDIR: a
 * component is a file; ELOOP: a symlink). replace: a component that is not
 * a directory is removed first (a journal's state wins over what is there). */
int sb_fs_mkdirs_beneath(int dirfd, const char *rel, mode_t mode, bool replace);

/* Remove name in dirfd whatever it is: a directory with everything in it
 * (on dirfd's device only; depth at most 1024), anything else unlinked
 * without being opened. 0 when it is gone (or was never there); -1 with
 * errno. */
int sb_fs_remove_at(int dirfd, const char *name);

/* Copy size bytes of regular file in to out (both fds) keeping holes:
 * only the data extents are written, then out is cut to size. *alloc
 * (may be NULL) gets out's allocated bytes after. -1 with errno. */
int sb_fs_copy_sparse(int in, int out, uint64_t size, uint64_t *alloc);

/* Bytes allocated to a file (st_blocks in 512-byte units). */
static inline uint64_t sb_fs_alloc(const struct stat *st)
{
	return (uint64_t)st->st_blocks * 512u;
}

/* Walk the tree beneath dirfd, depth first, a directory before what it
 * holds, names sorted: fn gets each entry's relative path and lstat (a
 * symlink is reported, never followed; another device's directory is
 * reported and not entered). fn returns 0 to go on, 1 to skip a
 * directory's contents, -1 to stop (the walk returns -1, errno as fn
 * left it). At most SB_FS_WALK_MAX entries: then -1 with E2BIG. */
#define SB_FS_WALK_MAX 1000000
int sb_fs_walk(int dirfd, int (*fn)(void *ctx, const char *rel, const struct stat *st), void *ctx);

#endif
