/* A workspace's sync, staged and journaled (see sync.h). */
#include "workspaces/sync.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fd.h"
#include "workspaces/fsafe.h"
#include "workspaces/journal.h"
#include "workspaces/store.h"

enum { SEEN_PUT = 1, SEEN_DEL = 2 };

/* The paths one sync named: each at most once, and none beneath a path it
 * removed (that would count the same bytes as freed twice). */
struct pathset {
	char **keys;
	unsigned char *tags;
	size_t cap, n;
};

struct sb_ws_sync {
	struct sb_ws *ws;
	bool full;
	int stage_fd;                 /* NAME/stage, O_PATH */
	json_t *dels, *dirs, *files;  /* the journal's ops, by kind */
	int cur_fd;                   /* the file whose data comes now, -1 */
	uint64_t cur_size, cur_next, cur_alloc;
	unsigned seq;                 /* stage names: f1, f2, ... */
	uint64_t data_bytes;          /* bytes of data received */
	uint64_t staged;              /* allocated by the stage's closed files */
	uint64_t freed;               /* allocated by what this sync replaces or removes */
	int64_t entries;              /* entries after the sync (counted as it goes) */
	json_t *skipped;
	unsigned skipped_more;
	struct pathset seen;
	bool failed;
	struct sb_error err;
};

/* ---- the path set (open addressing, FNV-1a) */
static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static size_t slot_of(const struct pathset *p, const char *k)
{
	size_t i = (size_t)hash(k) & (p->cap - 1);
	while (p->keys[i] && strcmp(p->keys[i], k))
		i = (i + 1) & (p->cap - 1);
	return i;
}

static int set_tag(const struct pathset *p, const char *k)
{
	if (!p->cap)
		return 0;
	size_t i = slot_of(p, k);
	return p->keys[i] ? p->tags[i] : 0;
}

static int set_add(struct pathset *p, const char *k, int tag)
{
	if ((p->n + 1) * 2 > p->cap) {
		struct pathset q = {.cap = p->cap ? p->cap * 2 : 64};
		q.keys = calloc(q.cap, sizeof *q.keys);
		q.tags = calloc(q.cap, 1);
		if (!q.keys || !q.tags) {
			free(q.keys);
			free(q.tags);
			return -1;
		}
		for (size_t i = 0; i < p->cap; i++)
			if (p->keys[i]) {
				size_t j = slot_of(&q, p->keys[i]);
				q.keys[j] = p->keys[i];
				q.tags[j] = p->tags[i];
			}
		q.n = p->n;
		free(p->keys);
		free(p->tags);
		*p = q;
	}
	size_t i = slot_of(p, k);
	if (!(p->keys[i] = strdup(k)))
		return -1;
	p->tags[i] = (unsigned char)tag;
	p->n++;
	return 0;
}

static void set_free(struct pathset *p)
{
	for (size_t i = 0; i < p->cap; i++)
		free(p->keys[i]);
	free(p->keys);
	free(p->tags);
}

/* ---- failing */
static int refuse(struct sb_ws_sync *s, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(struct sb_ws_sync *s, int errnum, const char *fmt, ...)
{
	if (!s->failed) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->err.msg, sizeof s->err.msg, fmt, ap);
		va_end(ap);
		s->err.errnum = errnum;
		s->failed = true;
	}
	return -1;
}

bool sb_ws_sync_failed(const struct sb_ws_sync *s, struct sb_error *err)
{
	if (s->failed && err)
		*err = s->err;
	return s->failed;
}

/* ---- what the store holds now at a path */
struct tree_count {
	uint64_t bytes, entries;
};

static int tree_fn(void *ctx, const char *rel, const struct stat *st)
{
	(void)rel;
	struct tree_count *t = ctx;
	t->entries++;
	if (S_ISREG(st->st_mode))
		t->bytes += sb_fs_alloc(st);
	return 0;
}

/* The allocated bytes and entries at rel in the store (a tree counted
 * whole); 0, 0 when nothing is there. */
static struct tree_count existing(struct sb_ws *ws, const char *rel)
{
	struct tree_count t = {0, 0};
	const char *leaf;
	SB_AUTO_FD parent = sb_fs_parent_beneath(ws->files_fd, rel, &leaf);
	struct stat st;
	if (parent < 0 || fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return t;
	t.entries = 1;
	if (S_ISREG(st.st_mode))
		t.bytes = sb_fs_alloc(&st);
	if (S_ISDIR(st.st_mode)) {
		SB_AUTO_FD d = sb_fs_open_beneath(parent, leaf, O_PATH | O_DIRECTORY, 0);
		if (d >= 0)
			sb_fs_walk(d, tree_fn, &t);
	}
	return t;
}

/* ---- begin, ops, end */
struct sb_ws_sync *sb_ws_sync_begin(struct sb_ws *ws, bool full, struct sb_error *err)
{
	if (ws->lock_fd < 0) {
		sb_fail(err, "internal: a sync of workspace %s, which is not held", ws->name);
		return NULL;
	}
	if (sb_ws_journal_recover(ws, err))
		return NULL;
	struct sb_ws_sync *s = calloc(1, sizeof *s);
	if (!s) {
		sb_fail(err, "out of memory");
		return NULL;
	}
	s->ws = ws;
	s->full = full;
	s->cur_fd = -1;
	s->dels = json_array();
	s->dirs = json_array();
	s->files = json_array();
	s->skipped = json_array();
	s->entries = full ? 0 : (int64_t)ws->entries;
	s->freed = full ? ws->bytes : 0;
	if (mkdirat(ws->dir_fd, "stage", 0700) < 0 ||
	    (s->stage_fd = sb_fs_open_beneath(ws->dir_fd, "stage", O_PATH | O_DIRECTORY, 0)) < 0) {
		sb_fail_errno(err, "cannot make the stage of workspace %s", ws->name);
		s->stage_fd = -1;
		sb_ws_sync_abort(s);
		return NULL;
	}
	return s;
}

static bool over_cap(const struct sb_ws_sync *s)
{
	uint64_t base = s->ws->bytes > s->freed ? s->ws->bytes - s->freed : 0;
	return base + s->staged + s->cur_alloc > s->ws->cap;
}

static int close_current(struct sb_ws_sync *s)
{
	if (s->cur_fd < 0)
		return 0;
	struct stat st;
	if (fstat(s->cur_fd, &st) == 0)
		s->cur_alloc = sb_fs_alloc(&st);
	s->staged += s->cur_alloc;
	s->cur_alloc = 0;
	sb_close(&s->cur_fd);
	return 0;
}

/* The path of an op: checked, new in this sync, not beneath a removed
 * path. NULL when refused. */
static const char *op_path(struct sb_ws_sync *s, const json_t *hdr, int tag)
{
	const char *p = json_string_value(json_object_get(hdr, "path"));
	if (!p || !sb_fs_relpath_ok(p)) {
		refuse(s, EPROTO, "a path that is not a plain relative path");
		return NULL;
	}
	if (set_tag(&s->seen, p)) {
		refuse(s, EPROTO, "the path %.200s twice", p);
		return NULL;
	}
	char up[SB_FS_REL_MAX + 1];
	snprintf(up, sizeof up, "%s", p);
	for (char *slash; (slash = strrchr(up, '/'));) {
		*slash = '\0';
		if (set_tag(&s->seen, up) == SEEN_DEL) {
			refuse(s, EPROTO, "%.200s beneath %.200s, which the same sync removes", p, up);
			return NULL;
		}
	}
	if (tag == SEEN_DEL && (json_array_size(s->dirs) || json_array_size(s->files))) {
		refuse(s, EPROTO, "a removal after files or directories");
		return NULL;
	}
	if (set_add(&s->seen, p, tag)) {
		refuse(s, ENOMEM, "out of memory");
		return NULL;
	}
	return p;
}

static bool exec_bit(const json_t *hdr)
{
	json_t *m = json_object_get(hdr, "mode");
	return json_is_integer(m) && (json_integer_value(m) & 0111);
}

static int op_entry(struct sb_ws_sync *s, const json_t *hdr, bool dir)
{
	const char *p = op_path(s, hdr, SEEN_PUT);
	if (!p)
		return -1;
	json_t *m = json_object_get(hdr, "mode");
	if (!json_is_integer(m) || json_integer_value(m) < 0 || json_integer_value(m) > 07777)
		return refuse(s, EPROTO, "%.200s: a mode that is not a number from 0 to 07777", p);
	if (!s->full) {
		/* What it replaces is freed; a directory that stays is neither. */
		struct tree_count t = existing(s->ws, p);
		bool stays = false;
		if (dir && t.entries) {
			const char *leaf;
			SB_AUTO_FD parent = sb_fs_parent_beneath(s->ws->files_fd, p, &leaf);
			struct stat st;
			stays = parent >= 0 && !fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);
		}
		if (!stays) {
			s->freed += t.bytes;
			s->entries += 1 - (int64_t)t.entries;
		}
	} else {
		s->entries++;
	}
	if (s->entries > SB_WS_ENTRIES_MAX)
		return refuse(s, ENOSPC, "more than %u files and directories", SB_WS_ENTRIES_MAX);
	if (dir) {
		json_array_append_new(s->dirs, json_pack("[s]", p));
		return 0;
	}
	json_t *sz = json_object_get(hdr, "size");
	if (!json_is_integer(sz) || json_integer_value(sz) < 0 || (uint64_t)json_integer_value(sz) > SB_WS_FILE_MAX)
		return refuse(s, EPROTO, "%.200s: a size that is not a number up to 1 TiB", p);
	char stage[24];
	snprintf(stage, sizeof stage, "f%u", ++s->seq);
	s->cur_fd = sb_fs_open_beneath(s->stage_fd, stage, O_WRONLY | O_CREAT | O_EXCL, exec_bit(hdr) ? 0700 : 0600);
	if (s->cur_fd < 0)
		return refuse(s, errno, "cannot stage %.200s: %s", p, strerror(errno));
	s->cur_size = (uint64_t)json_integer_value(sz);
	s->cur_next = 0;
	/* A file's size first: a hole, no blocks, until its data comes. */
	if (ftruncate(s->cur_fd, (off_t)s->cur_size) < 0)
		return refuse(s, errno, "cannot stage %.200s: %s", p, strerror(errno));
	json_array_append_new(s->files, json_pack("[s, s]", p, stage));
	return 0;
}

static int op_data(struct sb_ws_sync *s, const json_t *hdr, const char *payload, size_t n)
{
	json_t *o = json_object_get(hdr, "offset");
	if (s->cur_fd < 0)
		return refuse(s, EPROTO, "data without a file");
	if (!json_is_integer(o) || json_integer_value(o) < 0 || (uint64_t)json_integer_value(o) < s->cur_next ||
	    n == 0 || (uint64_t)json_integer_value(o) > s->cur_size || n > s->cur_size - (uint64_t)json_integer_value(o))
		return refuse(s, EPROTO, "data out of order or past its file's size");
	uint64_t off = (uint64_t)json_integer_value(o);
	for (size_t done = 0; done < n;) {
		ssize_t w = SB_RETRY_EINTR(pwrite(s->cur_fd, payload + done, n - done, (off_t)(off + done)));
		if (w < 0)
			return refuse(s, errno, "cannot write a staged file: %s", strerror(errno));
		done += (size_t)w;
	}
	s->cur_next = off + n;
	s->data_bytes += n;
	struct stat st;
	if (fstat(s->cur_fd, &st) == 0)
		s->cur_alloc = sb_fs_alloc(&st);
	if (over_cap(s))
		return refuse(s, ENOSPC, "the workspace's files would take more than its cap of %llu bytes on disk",
			      (unsigned long long)s->ws->cap);
	return 0;
}

int sb_ws_sync_op(struct sb_ws_sync *s, const json_t *hdr, const char *payload, size_t n)
{
	if (s->failed)
		return -1;
	const char *op = json_string_value(json_object_get(hdr, "op"));
	if (!op)
		return refuse(s, EPROTO, "a sync frame without an op");
	if (strcmp(op, "data") && close_current(s))
		return -1;
	if (strcmp(op, "data") && n)
		return refuse(s, EPROTO, "bytes on a %.20s op", op);
	if (!strcmp(op, "data"))
		return op_data(s, hdr, payload, n);
	if (!strcmp(op, "file") || !strcmp(op, "dir"))
		return op_entry(s, hdr, op[0] == 'd');
	if (!strcmp(op, "del")) {
		const char *p = op_path(s, hdr, SEEN_DEL);
		if (!p)
			return -1;
		if (s->full)
			return refuse(s, EPROTO, "a removal in a full sync");
		struct tree_count t = existing(s->ws, p);
		s->freed += t.bytes;
		s->entries -= (int64_t)t.entries;
		json_array_append_new(s->dels, json_string(p));
		return 0;
	}
	if (!strcmp(op, "skip")) {
		const char *p = json_string_value(json_object_get(hdr, "path"));
		const char *why = json_string_value(json_object_get(hdr, "why"));
		if (!p || !sb_fs_relpath_ok(p) || !why || strlen(why) > 200)
			return refuse(s, EPROTO, "a skip without a path or a reason");
		if (json_array_size(s->skipped) < SB_WS_SKIPS_SHOWN)
			json_array_append_new(s->skipped, json_pack("{s:s, s:s}", "path", p, "why", why));
		else
			s->skipped_more++;
		return 0;
	}
	return refuse(s, EPROTO, "an unknown sync op '%.20s'", op);
}

static void sync_free(struct sb_ws_sync *s)
{
	sb_close(&s->cur_fd);
	sb_close(&s->stage_fd);
	json_decref(s->dels);
	json_decref(s->dirs);
	json_decref(s->files);
	json_decref(s->skipped);
	set_free(&s->seen);
	free(s);
}

void sb_ws_sync_abort(struct sb_ws_sync *s)
{
	if (!s)
		return;
	sb_close(&s->cur_fd);
	sb_fs_remove_at(s->ws->dir_fd, "stage");
	sync_free(s);
}

/* The commit point: the journal renamed into the stage. */
static int commit(struct sb_ws_sync *s, struct sb_error *err)
{
	json_t *j = json_pack("{s:i, s:b, s:O, s:O, s:O}", "v", 1, "full", s->full, "del", s->dels, "dir", s->dirs,
			      "file", s->files);
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	int fd = text ? sb_fs_open_beneath(s->stage_fd, "journal.tmp", O_WRONLY | O_CREAT | O_EXCL, 0600) : -1;
	bool ok = fd >= 0 && !sb_write_all(fd, text, strlen(text));
	if (fd >= 0)
		close(fd);
	free(text);
	if (!ok || renameat(s->stage_fd, "journal.tmp", s->stage_fd, "journal") < 0)
		return sb_fail_errno(err, "cannot write the journal of workspace %s", s->ws->name);
	return 0;
}


int sb_ws_sync_end(struct sb_ws_sync *s, json_t **report, struct sb_error *err)
{
	if (report)
		*report = NULL;
	close_current(s);
	if (s->failed || over_cap(s)) {
		if (!s->failed)
			refuse(s, ENOSPC, "the workspace's files would take more than its cap on disk");
		*err = s->err;
		sb_ws_sync_abort(s);
		return -1;
	}
	struct sb_ws *ws = s->ws;
	if (commit(s, err)) {
		sb_ws_sync_abort(s);
		return -1;
	}
	json_t *j = json_pack("{s:b, s:O, s:O, s:O}", "full", s->full, "del", s->dels, "dir", s->dirs, "file", s->files);
	int rc = sb_ws_journal_apply(ws, j, err);
	json_decref(j);
	if (!rc) {
		ws->bytes = (ws->bytes > s->freed ? ws->bytes - s->freed : 0) + s->staged;
		ws->entries = s->entries > 0 ? (uint64_t)s->entries : 0;
		sb_ws_meta_write(ws, NULL);
		if (report)
			*report = json_pack("{s:I, s:I, s:I, s:I, s:O, s:I}", "files", (json_int_t)json_array_size(s->files),
					    "dirs", (json_int_t)json_array_size(s->dirs), "deleted",
					    (json_int_t)json_array_size(s->dels), "bytes", (json_int_t)s->data_bytes,
					    "skipped", s->skipped, "skipped_more", (json_int_t)s->skipped_more);
	}
	sync_free(s);
	return rc;
}
