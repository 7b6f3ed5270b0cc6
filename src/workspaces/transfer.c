/* A workspace's files into a session, or to and from a directory (see
 * transfer.h). */
#include "workspaces/transfer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fd.h"
#include "workspaces/fsafe.h"
#include "workspaces/sync.h"

static const char *kind_of(mode_t m)
{
	if (S_ISLNK(m))
		return "a symbolic link: not kept";
	if (S_ISFIFO(m))
		return "a FIFO: not kept";
	if (S_ISSOCK(m))
		return "a socket: not kept";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device node: not kept";
	return "not a regular file or directory: not kept";
}

static void note_skip(json_t *skipped, unsigned *more, const char *path, const char *why)
{
	if (!skipped)
		return;
	if (json_array_size(skipped) < SB_WS_SKIPS_SHOWN)
		json_array_append_new(skipped, json_pack("{s:s, s:s}", "path", path, "why", why));
	else if (more)
		(*more)++;
}

/* ---- restore */
struct restore {
	struct sb_ws *ws;
	const char *skip;
	sb_ws_emit_fn emit;
	void *ctx;
	json_t *skipped;
	unsigned *more;
	char *buf;
	struct sb_error *err;
	bool failed;
};

/* A file's data extents, in chunks, through emit. */
static int send_data(struct restore *r, int fd, const struct sb_ws_item *it)
{
	off_t pos = 0;
	while ((uint64_t)pos < it->size) {
		off_t data = lseek(fd, pos, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			return 0;
		if (data < 0)
			data = pos;
		off_t hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole > it->size)
			hole = (off_t)it->size;
		for (off_t at = data; at < hole;) {
			size_t want = (size_t)(hole - at) < SB_WS_CHUNK ? (size_t)(hole - at) : SB_WS_CHUNK;
			ssize_t n = SB_RETRY_EINTR(pread(fd, r->buf, want, at));
			if (n <= 0)
				return n < 0 ? -1 : 0; /* (shorter than its size said: the rest is a hole) */
			if (r->emit(r->ctx, it, (uint64_t)at, r->buf, (size_t)n)) {
				errno = EPIPE;
				return -1;
			}
			at += n;
		}
		pos = hole > data ? hole : data + 1;
	}
	return 0;
}

static int stopped(struct restore *r)
{
	sb_fail(r->err, "the session stopped taking workspace %s's files", r->ws->name);
	r->failed = true;
	return -1;
}

static int restore_fn(void *ctx, const char *rel, const struct stat *st)
{
	struct restore *r = ctx;
	if (r->skip && !strcmp(rel, r->skip)) {
		note_skip(r->skipped, r->more, rel, "the user's project folder is there in this session: not restored");
		return 1;
	}
	if (!sb_fs_relpath_ok(rel)) {
		note_skip(r->skipped, r->more, "?", "a name that is not UTF-8 text: not restored");
		return 1;
	}
	struct sb_ws_item it = {.path = rel, .dir = S_ISDIR(st->st_mode), .exec = (st->st_mode & 0100) != 0,
				.size = (uint64_t)st->st_size};
	if (!S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode)) {
		note_skip(r->skipped, r->more, rel, kind_of(st->st_mode));
		return 0;
	}
	/* sagebox never makes a hard link in the store: one there was put by
	 * hand, and may be another name of a file outside the workspace */
	if (S_ISREG(st->st_mode) && st->st_nlink > 1) {
		note_skip(r->skipped, r->more, rel, "a file with other names (a hard link): not restored");
		return 0;
	}
	if (it.dir)
		return r->emit(r->ctx, &it, 0, NULL, 0) ? stopped(r) : 0;
	struct stat again;
	SB_AUTO_FD fd = sb_fs_open_regular(r->ws->files_fd, rel, &again);
	if (fd < 0) {
		sb_fail_errno(r->err, "cannot read %s of workspace %s", rel, r->ws->name);
		r->failed = true;
		return -1;
	}
	if (again.st_nlink > 1) { /* (linked meanwhile) */
		note_skip(r->skipped, r->more, rel, "a file with other names (a hard link): not restored");
		return 0;
	}
	it.size = (uint64_t)again.st_size;
	it.exec = (again.st_mode & 0100) != 0;
	if (r->emit(r->ctx, &it, 0, NULL, 0))
		return stopped(r);
	if (send_data(r, fd, &it) < 0) {
		if (errno == EPIPE)
			return stopped(r);
		sb_fail_errno(r->err, "cannot read %s of workspace %s", rel, r->ws->name);
		r->failed = true;
		return -1;
	}
	return 0;
}

int sb_ws_restore_walk(struct sb_ws *ws, const char *skip, sb_ws_emit_fn emit, void *ctx, json_t *skipped,
		       unsigned *more, struct sb_error *err)
{
	struct restore r = {ws, skip, emit, ctx, skipped, more, malloc(SB_WS_CHUNK), err, false};
	if (!r.buf)
		return sb_fail(err, "out of memory");
	int rc = sb_fs_walk(ws->files_fd, restore_fn, &r);
	free(r.buf);
	if (rc && !r.failed)
		sb_fail_errno(err, "cannot read workspace %s", ws->name);
	return rc ? -1 : 0;
}

/* ---- a tree from one directory to another */
struct copy {
	int src, dst;
	const struct sb_ws_copy_modes *modes;
	uint64_t max_bytes, max_entries, bytes, entries;
	json_t *skipped;
	unsigned *more;
	struct sb_error *err;
	bool failed;
};

/* (a return, not a goto past the descriptors that close themselves) */
static int copy_failed(struct copy *c)
{
	c->failed = true;
	return -1;
}

static int copy_fn(void *ctx, const char *rel, const struct stat *st)
{
	struct copy *c = ctx;
	if (!sb_fs_relpath_ok(rel)) {
		note_skip(c->skipped, c->more, "?", "a name that is not UTF-8 text: not copied");
		return 1;
	}
	if (!S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode)) {
		note_skip(c->skipped, c->more, rel, kind_of(st->st_mode));
		return 0;
	}
	if (++c->entries > c->max_entries) {
		errno = ENOSPC;
		sb_fail(c->err, "more than %llu files and directories", (unsigned long long)c->max_entries);
		return copy_failed(c);
	}
	const char *leaf;
	SB_AUTO_FD parent = sb_fs_parent_beneath(c->dst, rel, &leaf);
	if (parent < 0) {
		sb_fail_errno(c->err, "cannot reach %s", rel);
		return copy_failed(c);
	}
	if (S_ISDIR(st->st_mode)) {
		if (mkdirat(parent, leaf, c->modes->dir) < 0) {
			sb_fail_errno(c->err, "cannot make %s", rel);
			return copy_failed(c);
		}
		return 0;
	}
	struct stat again;
	SB_AUTO_FD in = sb_fs_open_regular(c->src, rel, &again);
	SB_AUTO_FD out = in < 0 ? -1 : sb_fs_open_beneath(parent, leaf, O_WRONLY | O_CREAT | O_EXCL,
							  (again.st_mode & 0100) ? c->modes->exec : c->modes->file);
	uint64_t alloc = 0;
	if (in < 0 || out < 0 || sb_fs_copy_sparse(in, out, (uint64_t)again.st_size, &alloc) < 0) {
		sb_fail_errno(c->err, "cannot copy %s", rel);
		return copy_failed(c);
	}
	/* (created with O_EXCL under the umask: the mode exactly, no more) */
	fchmod(out, (again.st_mode & 0100) ? c->modes->exec : c->modes->file);
	c->bytes += alloc;
	if (c->bytes > c->max_bytes) {
		errno = ENOSPC;
		sb_fail(c->err, "the files take more than %llu bytes", (unsigned long long)c->max_bytes);
		return copy_failed(c);
	}
	return 0;
}

int sb_ws_copy_tree(int src, int dst, const struct sb_ws_copy_modes *modes, uint64_t max_bytes, uint64_t max_entries,
		    json_t *skipped, unsigned *more, uint64_t *bytes, uint64_t *entries, struct sb_error *err)
{
	struct copy c = {src, dst, modes, max_bytes, max_entries, 0, 0, skipped, more, err, false};
	int rc = sb_fs_walk(src, copy_fn, &c);
	if (rc && !c.failed)
		sb_fail_errno(err, "cannot read the directory");
	if (bytes)
		*bytes = c.bytes;
	if (entries)
		*entries = c.entries;
	return rc ? -1 : 0;
}
