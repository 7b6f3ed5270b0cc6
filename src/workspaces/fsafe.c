/* Beneath-only, never-follow file operations (see fsafe.h). */
#include "workspaces/fsafe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/fd.h"
#include "util/utf8.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* The deepest tree sb_fs_remove_at and sb_fs_walk enter: a path of
 * SB_FS_REL_MAX bytes has at most half as many components. */
#define DEPTH_MAX 2048

bool sb_fs_relpath_ok(const char *p)
{
	size_t n = p ? strlen(p) : 0;
	if (n == 0 || n > SB_FS_REL_MAX || p[0] == '/' || !sb_utf8_valid(p, n, NULL))
		return false;
	for (const unsigned char *q = (const unsigned char *)p; *q; q++)
		if (*q < 0x20 || *q == 0x7f)
			return false;
	for (const char *seg = p;;) {
		const char *end = strchr(seg, '/');
		size_t k = end ? (size_t)(end - seg) : strlen(seg);
		if (k == 0 || k > SB_FS_NAME_MAX || (k == 1 && seg[0] == '.') || (k == 2 && !strncmp(seg, "..", 2)))
			return false;
		if (!end)
			return true;
		seg = end + 1;
	}
}

/* Component by component, each with O_NOFOLLOW: where openat2 is missing.
 * The path was checked (no "..", no empty component), so this resolves
 * exactly as RESOLVE_BENEATH would, and refuses every symlink. */
static int open_by_components(int at, const char *rel, int flags, mode_t mode)
{
	char buf[SB_FS_REL_MAX + 1];
	snprintf(buf, sizeof buf, "%s", rel);
	int cur = at;
	char *save = NULL, *next;
	for (char *c = strtok_r(buf, "/", &save); c; c = next) {
		next = strtok_r(NULL, "/", &save);
		int fd = next ? openat(cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			      : openat(cur, c, flags, mode);
		if (fd >= 0 && next) {
			struct stat a, b;
			/* no mount crossing, as RESOLVE_NO_XDEV */
			if (fstat(fd, &a) || fstat(cur, &b) || a.st_dev != b.st_dev) {
				close(fd);
				fd = -1;
				errno = EXDEV;
			}
		}
		int saved = errno;
		if (cur != at)
			close(cur);
		errno = saved;
		if (fd < 0)
			return -1;
		cur = fd;
	}
	return cur;
}

int sb_fs_open_beneath(int at, const char *rel, int flags, mode_t mode)
{
	if (!sb_fs_relpath_ok(rel)) {
		errno = EINVAL;
		return -1;
	}
	flags |= O_NOFOLLOW | O_CLOEXEC;
	struct open_how how = {
		.flags = (uint64_t)flags,
		.mode = (flags & (O_CREAT | __O_TMPFILE)) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	long fd = SB_RETRY_EINTR(syscall(SYS_openat2, at, rel, &how, sizeof how));
	if (fd < 0 && errno == ENOSYS)
		return open_by_components(at, rel, flags, mode);
	return (int)fd;
}

int sb_fs_parent_beneath(int at, const char *rel, const char **leaf)
{
	const char *slash = strrchr(rel, '/');
	if (!sb_fs_relpath_ok(rel)) {
		errno = EINVAL;
		return -1;
	}
	*leaf = slash ? slash + 1 : rel;
	if (!slash)
		return fcntl(at, F_DUPFD_CLOEXEC, 0);
	char dir[SB_FS_REL_MAX + 1];
	snprintf(dir, sizeof dir, "%.*s", (int)(slash - rel), rel);
	return sb_fs_open_beneath(at, dir, O_PATH | O_DIRECTORY, 0);
}

int sb_fs_open_regular(int at, const char *rel, struct stat *st)
{
	SB_AUTO_FD p = sb_fs_open_beneath(at, rel, O_PATH, 0);
	if (p < 0 || fstat(p, st) < 0)
		return -1;
	if (!S_ISREG(st->st_mode)) {
		errno = ENXIO;
		return -1;
	}
	/* Reopened through our own descriptor: the same inode, checked a
	 * regular file above, whatever happens to the name meanwhile. */
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", p);
	int fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT) /* no /proc: the name again, never a FIFO's open wait */
		fd = sb_fs_open_beneath(at, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	struct stat again;
	if (fd >= 0 && (fstat(fd, &again) || again.st_ino != st->st_ino || again.st_dev != st->st_dev ||
			!S_ISREG(again.st_mode))) {
		close(fd);
		errno = ENXIO;
		return -1;
	}
	return fd;
}

int sb_fs_mkdirs_beneath(int at, const char *rel, mode_t mode, bool replace)
{
	if (!sb_fs_relpath_ok(rel)) {
		errno = EINVAL;
		return -1;
	}
	char buf[SB_FS_REL_MAX + 1];
	snprintf(buf, sizeof buf, "%s", rel);
	int cur = fcntl(at, F_DUPFD_CLOEXEC, 0);
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); c && cur >= 0; c = strtok_r(NULL, "/", &save)) {
		struct stat st;
		if (replace && fstatat(cur, c, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
			sb_fs_remove_at(cur, c);
		if (mkdirat(cur, c, mode) < 0 && errno != EEXIST) {
			sb_close(&cur);
			return -1;
		}
		int fd = sb_fs_open_beneath(cur, c, O_PATH | O_DIRECTORY, 0);
		sb_close(&cur);
		cur = fd;
	}
	return cur;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_names(DIR *d, char ***names, size_t *n);

static int remove_tree(int at, const char *name, dev_t dev, unsigned depth)
{
	struct stat st;
	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(at, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	if (st.st_dev != dev || depth > DEPTH_MAX) {
		errno = st.st_dev != dev ? EXDEV : ELOOP;
		return -1;
	}
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char **names = NULL;
	size_t n = 0;
	int rc = read_names(d, &names, &n);
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = remove_tree(dirfd(d), names[i], dev, depth + 1);
		free(names[i]);
	}
	free(names);
	int saved = errno;
	closedir(d);
	errno = saved;
	if (rc)
		return -1;
	return unlinkat(at, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -1 : 0;
}

int sb_fs_remove_at(int at, const char *name)
{
	struct stat st;
	if (fstat(at, &st) < 0)
		return -1;
	return remove_tree(at, name, st.st_dev, 0);
}

static int write_all_at(int fd, const char *p, size_t n, off_t off)
{
	while (n > 0) {
		ssize_t w = SB_RETRY_EINTR(pwrite(fd, p, n, off));
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

int sb_fs_copy_sparse(int in, int out, uint64_t size, uint64_t *alloc)
{
	static const size_t step = 1u << 20;
	char *buf = malloc(step);
	if (!buf)
		return -1;
	int rc = 0;
	off_t pos = 0;
	while (!rc && (uint64_t)pos < size) {
		off_t data = lseek(in, pos, SEEK_DATA);
		if (data < 0) {
			if (errno == ENXIO)
				break; /* only a hole from here on */
			data = pos; /* no SEEK_DATA here: copy it all */
		}
		off_t hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole > size)
			hole = (off_t)size;
		for (off_t at = data; !rc && at < hole;) {
			size_t want = (size_t)(hole - at) < step ? (size_t)(hole - at) : step;
			ssize_t r = SB_RETRY_EINTR(pread(in, buf, want, at));
			if (r < 0)
				rc = -1;
			else if (r == 0)
				hole = at; /* it shrank under us */
			else if (!(rc = write_all_at(out, buf, (size_t)r, at)))
				at += r;
		}
		pos = hole > data ? hole : data + 1;
	}
	free(buf);
	if (!rc && ftruncate(out, (off_t)size) < 0)
		rc = -1;
	struct stat st;
	if (!rc && alloc)
		*alloc = fstat(out, &st) ? 0 : sb_fs_alloc(&st);
	return rc;
}

/* ---- the walk */
struct walk_dir {
	DIR *d;
	size_t len;     /* of the path prefix this directory's entries get */
	char **names;   /* sorted, freed as they are visited */
	size_t n, next;
};

/* The entries of a directory, sorted (but "." and ".."). */
static int read_names(DIR *d, char ***names, size_t *n)
{
	size_t cap = 0;
	struct dirent *e;
	while ((errno = 0, e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nv = realloc(*names, nc * sizeof *nv);
			if (!nv)
				return -1;
			*names = nv;
			cap = nc;
		}
		if (!((*names)[*n] = strdup(e->d_name)))
			return -1;
		(*n)++;
	}
	if (errno)
		return -1;
	if (*n)
		qsort(*names, *n, sizeof **names, by_name);
	return 0;
}

static void walk_dir_free(struct walk_dir *w)
{
	for (size_t i = w->next; i < w->n; i++)
		free(w->names[i]);
	free(w->names);
	if (w->d)
		closedir(w->d);
}

static int open_walk_dir(int parent, const char *name, struct walk_dir *w, size_t len)
{
	memset(w, 0, sizeof *w);
	w->len = len;
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(w->d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return read_names(w->d, &w->names, &w->n);
}

int sb_fs_walk(int at, int (*fn)(void *ctx, const char *rel, const struct stat *st), void *ctx)
{
	struct stat top;
	if (fstat(at, &top) < 0)
		return -1;
	struct walk_dir *stack = calloc(DEPTH_MAX + 1, sizeof *stack);
	char *path = malloc(SB_FS_REL_MAX + SB_FS_NAME_MAX + 2);
	if (!stack || !path) {
		free(stack);
		free(path);
		errno = ENOMEM;
		return -1;
	}
	int rc = 0;
	size_t depth = 0, seen = 0;
	if (open_walk_dir(at, ".", &stack[0], 0) < 0)
		rc = -1;
	while (!rc) {
		struct walk_dir *w = &stack[depth];
		if (w->next == w->n) {
			walk_dir_free(w);
			memset(w, 0, sizeof *w);
			if (depth == 0)
				break;
			depth--;
			continue;
		}
		char *name = w->names[w->next++];
		size_t nl = strlen(name);
		if (w->len + nl + 1 > SB_FS_REL_MAX) {
			free(name); /* a path too long to name: not ours to show */
			continue;
		}
		if (w->len)
			path[w->len - 1] = '/';
		memcpy(path + w->len, name, nl + 1);
		struct stat st;
		int r = fstatat(dirfd(w->d), name, &st, AT_SYMLINK_NOFOLLOW);
		if (r < 0) {
			free(name);
			if (errno == ENOENT)
				continue; /* gone meanwhile */
			rc = -1;
			break;
		}
		if (++seen > SB_FS_WALK_MAX) {
			free(name);
			errno = E2BIG;
			rc = -1;
			break;
		}
		r = fn(ctx, path, &st);
		if (r < 0) {
			free(name);
			rc = -1;
			break;
		}
		if (r == 0 && S_ISDIR(st.st_mode) && st.st_dev == top.st_dev && depth < DEPTH_MAX) {
			if (open_walk_dir(dirfd(w->d), name, &stack[depth + 1], w->len + nl + 1) < 0) {
				walk_dir_free(&stack[depth + 1]);
				memset(&stack[depth + 1], 0, sizeof stack[0]);
				free(name);
				if (errno == ENOENT)
					continue;
				rc = -1;
				break;
			}
			depth++;
		}
		free(name);
	}
	int saved = errno;
	for (size_t i = 0; i <= depth && i <= DEPTH_MAX; i++)
		if (stack[i].d || stack[i].names)
			walk_dir_free(&stack[i]);
	free(stack);
	free(path);
	errno = saved;
	return rc;
}
