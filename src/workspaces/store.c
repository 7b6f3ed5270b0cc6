/* The workspaces' store: layout, names, holders, sizes (see store.h). */
#include "workspaces/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/fd.h"
#include "workspaces/fsafe.h"
#include "workspaces/journal.h"

/* The most bytes of a small JSON file of ours we read. */
#define SMALL_JSON_MAX (256u << 10)

static bool name_chars(const char *s, size_t max, const char *extra)
{
	size_t n = strlen(s);
	if (n == 0 || n > max || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr(extra, *p)))
			return false;
	return true;
}

bool sb_ws_name_check(const char *name, struct sb_error *err)
{
	if (name && name_chars(name, SB_WS_NAME_MAX, "._-"))
		return true;
	sb_fail(err, "invalid workspace name '%.80s'", name ? name : "");
	sb_hint(err, "a workspace name is 1 to 64 letters, digits, '.', '_' or '-' (not '.' or '..'), e.g. thesis");
	return false;
}

bool sb_ws_client_ok(const char *c)
{
	if (!strcmp(c, SB_WS_CLIENT_LOCAL))
		return true;
	return !strncmp(c, "token-", 6) && name_chars(c + 6, 63, "._@-");
}

int sb_ws_client_of_token(const char *token, char *out, size_t n, struct sb_error *err)
{
	if (!name_chars(token, 63, "._@-"))
		return sb_fail(err, "the client name '%.80s' cannot name a workspace directory", token);
	snprintf(out, n, "token-%s", token);
	return 0;
}

int sb_ws_root(char *dir, size_t n, struct sb_error *err)
{
	const char *data = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
	int w;
	if (data && data[0] == '/')
		w = snprintf(dir, n, "%s/sagebox/workspaces", data);
	else if (geteuid() == 0)
		w = snprintf(dir, n, "/var/lib/sagebox/workspaces");
	else if (home && home[0] == '/')
		w = snprintf(dir, n, "%s/.local/share/sagebox/workspaces", home);
	else
		return sb_fail(err, "neither XDG_DATA_HOME nor HOME is set, so sagebox has no place for workspaces");
	if (w < 0 || (size_t)w >= n)
		return sb_fail(err, "the workspaces directory's path is too long");
	return 0;
}

int sb_ws_store_open(struct sb_ws_store *st, bool create, struct sb_error *err)
{
	st->root_fd = -1;
	if (sb_ws_root(st->root, sizeof st->root, err))
		return -1;
	if (create) {
		/* The parents as packages/ makes them (0755: the sandbox user
		 * reaches site-packages there); the store itself 0700. */
		char p[PATH_MAX];
		snprintf(p, sizeof p, "%s", st->root);
		for (char *s = p + 1; (s = strchr(s, '/')); s++) {
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return sb_fail_errno(err, "cannot create %s", p);
			*s = '/';
		}
		if (mkdir(st->root, 0700) < 0 && errno != EEXIST)
			return sb_fail_errno(err, "cannot create %s", st->root);
	}
	st->root_fd = open(st->root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (st->root_fd < 0) {
		int e = errno;
		sb_fail_errno(err, "cannot open the workspaces directory %s", st->root);
		if (err)
			err->errnum = e;
		return -1;
	}
	struct stat s;
	if (fstat(st->root_fd, &s) < 0 || s.st_uid != geteuid() || (s.st_mode & 077)) {
		sb_fail(err, "%s is not a private directory of this user (mode %03o, owner %ld)", st->root,
			(unsigned)(s.st_mode & 0777), (long)s.st_uid);
		sb_hint(err, "chmod 700 %s (workspaces hold the user's files)", st->root);
		sb_ws_store_close(st);
		return -1;
	}
	return 0;
}

void sb_ws_store_close(struct sb_ws_store *st)
{
	sb_close(&st->root_fd);
}

/* A directory beneath at, made 0700 when create: its O_PATH fd. */
static int subdir(int at, const char *name, bool create)
{
	if (create && mkdirat(at, name, 0700) < 0 && errno != EEXIST)
		return -1;
	return sb_fs_open_beneath(at, name, O_PATH | O_DIRECTORY, 0);
}

int sb_ws_open(struct sb_ws_store *st, const char *client, const char *name, bool create, struct sb_ws *ws,
	       struct sb_error *err)
{
	memset(ws, 0, sizeof *ws);
	ws->dir_fd = ws->files_fd = ws->lock_fd = -1;
	if (!sb_ws_client_ok(client))
		return sb_fail(err, "internal: bad workspace client '%.80s'", client);
	if (!sb_ws_name_check(name, err))
		return -1;
	snprintf(ws->client, sizeof ws->client, "%s", client);
	snprintf(ws->name, sizeof ws->name, "%s", name);
	SB_AUTO_FD cfd = subdir(st->root_fd, client, create);
	if (cfd >= 0) {
		ws->created = create && mkdirat(cfd, name, 0700) == 0;
		ws->dir_fd = subdir(cfd, name, false);
	}
	if (ws->dir_fd >= 0)
		ws->files_fd = subdir(ws->dir_fd, "files", create);
	if (ws->files_fd < 0) {
		int e = errno;
		sb_ws_close(ws);
		if (e == ENOENT && !create) {
			sb_fail(err, "no workspace named %s", name);
			if (err)
				err->errnum = ENOENT;
			return sb_hint(err, "`sagebox workspaces list` shows the workspaces there are");
		}
		errno = e;
		return sb_fail_errno(err, "cannot open workspace %s in %s/%s", name, st->root, client);
	}
	return 0;
}

void sb_ws_close(struct sb_ws *ws)
{
	if (ws->lock_fd >= 0)
		sb_ws_release(ws);
	sb_close(&ws->files_fd);
	sb_close(&ws->dir_fd);
}

/* ---- small JSON files of ours, read and written beneath a directory */
static json_t *read_json_at(int at, const char *rel)
{
	struct stat st;
	SB_AUTO_FD fd = sb_fs_open_regular(at, rel, &st);
	if (fd < 0 || st.st_size <= 0 || (uint64_t)st.st_size > SMALL_JSON_MAX)
		return NULL;
	return json_loadfd(fd, JSON_DISABLE_EOF_CHECK, NULL);
}

static void write_json_at(int at, const char *name, json_t *v)
{
	char tmp[64];
	snprintf(tmp, sizeof tmp, ".%s.%ld", name, (long)getpid());
	char *s = json_dumps(v, JSON_COMPACT);
	int fd = s ? sb_fs_open_beneath(at, tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600) : -1;
	bool ok = fd >= 0 && !sb_write_all(fd, s, strlen(s)) && !sb_write_all(fd, "\n", 1);
	if (fd >= 0)
		close(fd);
	if (!ok || renameat(at, tmp, at, name) < 0)
		unlinkat(at, tmp, 0);
	free(s);
}

static json_t *holder_json(const struct sb_ws_holder *h)
{
	return json_pack("{s:I, s:s, s:I, s:I}", "pid", (json_int_t)h->pid, "session", h->session, "cap",
			 (json_int_t)h->cap, "since", (json_int_t)h->since);
}

static void holder_write(int fd, const struct sb_ws_holder *h)
{
	json_t *j = holder_json(h);
	char *s = json_dumps(j, JSON_COMPACT);
	if (s && ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, s, strlen(s), 0);
	free(s);
	json_decref(j);
}

/* The holder's lock on a workspace: an open file description lock on its
 * lock file (per open file, so two opens in one process conflict as two
 * processes do; gone when the holder's process is, however it died), which
 * another open can look at without taking it (F_OFD_GETLK). */
static int lock_hold(int fd)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	return fcntl(fd, F_OFD_SETLK, &fl);
}

static bool lock_held(int fd)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

/* Who holds the workspace whose directory is dir_fd: 1 and *h filled (as
 * far as its lock says), 0 nobody. */
static int held_by(int dir_fd, struct sb_ws_holder *h)
{
	memset(h, 0, sizeof *h);
	SB_AUTO_FD fd = sb_fs_open_beneath(dir_fd, "lock", O_RDONLY, 0);
	if (fd < 0 || !lock_held(fd))
		return 0;
	char buf[512];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	json_t *j = n > 0 ? json_loadb(buf, (size_t)n, 0, NULL) : NULL;
	h->pid = (long)json_integer_value(json_object_get(j, "pid"));
	snprintf(h->session, sizeof h->session, "%s", json_string_value(json_object_get(j, "session")) ? json_string_value(json_object_get(j, "session")) : "");
	h->cap = (uint64_t)json_integer_value(json_object_get(j, "cap"));
	h->since = (long long)json_integer_value(json_object_get(j, "since"));
	json_decref(j);
	return 1;
}

static int count_fn(void *ctx, const char *rel, const struct stat *st)
{
	(void)rel;
	struct sb_ws *ws = ctx;
	ws->entries++;
	if (S_ISREG(st->st_mode))
		ws->bytes += sb_fs_alloc(st);
	return 0;
}

static void recount(struct sb_ws *ws)
{
	ws->bytes = ws->entries = 0;
	sb_fs_walk(ws->files_fd, count_fn, ws);
}

int sb_ws_hold(struct sb_ws *ws, const struct sb_ws_holder *h, struct sb_error *err)
{
	int fd = sb_fs_open_beneath(ws->dir_fd, "lock", O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return sb_fail_errno(err, "cannot open the lock of workspace %s", ws->name);
	if (lock_hold(fd) < 0) {
		close(fd);
		struct sb_ws_holder other;
		held_by(ws->dir_fd, &other);
		if (other.session[0])
			sb_fail(err, "workspace %s is in use by session %s%s", ws->name, other.session,
				other.pid == (long)getpid() ? "" : " of another sagebox process");
		else
			sb_fail(err, "workspace %s is in use (by sagebox process %ld)", ws->name, other.pid);
		return sb_hint(err, "at most one session may have a workspace open: close that session "
				    "(session_close) or use another workspace name");
	}
	struct stat a, b;
	if (fstat(fd, &a) || fstat(ws->dir_fd, &b) || a.st_nlink == 0 || b.st_nlink == 0) {
		close(fd);
		return sb_fail(err, "workspace %s was removed while it was being opened", ws->name);
	}
	ws->lock_fd = fd;
	ws->cap = h->cap;
	holder_write(fd, h);
	if (sb_ws_journal_recover(ws, err)) {
		sb_ws_release(ws);
		return -1;
	}
	recount(ws);
	return 0;
}

void sb_ws_holder_set(struct sb_ws *ws, const char *session)
{
	if (ws->lock_fd < 0)
		return;
	struct sb_ws_holder h = {.pid = (long)getpid(), .cap = ws->cap, .since = (long long)time(NULL)};
	snprintf(h.session, sizeof h.session, "%s", session);
	holder_write(ws->lock_fd, &h);
}

void sb_ws_release(struct sb_ws *ws)
{
	if (ws->lock_fd < 0)
		return;
	sb_ws_meta_write(ws, NULL);
	/* What reached the page cache reaches the disk before the next
	 * session can find it gone in a power cut (sagebox's own death does
	 * not need this: the kernel keeps what was written). */
	syncfs(ws->lock_fd);
	if (ftruncate(ws->lock_fd, 0) < 0) {
		/* (the lock says nothing then; it is released below anyway) */
	}
	sb_close(&ws->lock_fd);
}

int sb_ws_client_lock(struct sb_ws_store *st, const char *client, struct sb_error *err)
{
	SB_AUTO_FD cfd = subdir(st->root_fd, client, true);
	int fd = cfd < 0 ? -1 : sb_fs_open_beneath(cfd, "+lock", O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return sb_fail_errno(err, "cannot open the workspaces of client %s", client);
	if (SB_RETRY_EINTR(flock(fd, LOCK_EX)) < 0) {
		close(fd);
		return sb_fail_errno(err, "cannot lock the workspaces of client %s", client);
	}
	return fd;
}

void sb_ws_client_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

static uint64_t meta_bytes(int dir_fd)
{
	json_t *m = read_json_at(dir_fd, "meta.json");
	uint64_t b = (uint64_t)json_integer_value(json_object_get(m, "bytes"));
	json_decref(m);
	return b;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* The directories in at (O_PATH ok) whose names pass ok, sorted. */
static json_t *dirs_in(int at, bool (*ok)(const char *))
{
	json_t *items[4096];
	size_t n = 0;
	SB_AUTO_FD rd = at < 0 ? -1 : openat(at, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = rd < 0 ? NULL : fdopendir(rd);
	if (d)
		rd = -1; /* (the DIR owns it) */
	struct dirent *e;
	while (d && (e = readdir(d)) && n < sizeof items / sizeof *items) {
		struct stat st;
		if (!ok(e->d_name) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
			continue;
		items[n++] = json_string(e->d_name);
	}
	if (d)
		closedir(d);
	qsort(items, n, sizeof *items, by_text);
	json_t *out = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(out, items[i]);
	return out;
}

static bool ws_name_ok(const char *s)
{
	return name_chars(s, SB_WS_NAME_MAX, "._-");
}

/* The workspace directories of a client, sorted. */
static json_t *names_of(struct sb_ws_store *st, const char *client)
{
	SB_AUTO_FD cfd = sb_fs_open_beneath(st->root_fd, client, O_PATH | O_DIRECTORY, 0);
	return dirs_in(cfd, ws_name_ok);
}

uint64_t sb_ws_cap_for(struct sb_ws_store *st, const char *client, const char *name, uint64_t per_workspace,
		       uint64_t total)
{
	json_t *names = names_of(st, client);
	SB_AUTO_FD cfd = sb_fs_open_beneath(st->root_fd, client, O_PATH | O_DIRECTORY, 0);
	uint64_t used = 0;
	size_t i;
	json_t *v;
	json_array_foreach(names, i, v) {
		const char *n = json_string_value(v);
		SB_AUTO_FD dfd = cfd < 0 || !strcmp(n, name) ? -1 : sb_fs_open_beneath(cfd, n, O_PATH | O_DIRECTORY, 0);
		if (dfd < 0)
			continue;
		struct sb_ws_holder h;
		used += held_by(dfd, &h) ? h.cap : meta_bytes(dfd);
	}
	json_decref(names);
	uint64_t room = used >= total ? 0 : total - used;
	return room < per_workspace ? room : per_workspace;
}

json_t *sb_ws_info(struct sb_ws_store *st, const char *client, const char *name)
{
	SB_AUTO_FD cfd = sb_fs_open_beneath(st->root_fd, client, O_PATH | O_DIRECTORY, 0);
	SB_AUTO_FD dfd = cfd < 0 ? -1 : sb_fs_open_beneath(cfd, name, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return NULL;
	json_t *m = read_json_at(dfd, "meta.json");
	struct sb_ws_holder h;
	json_t *held = held_by(dfd, &h) ? json_pack("{s:s, s:I}", "session", h.session, "pid", (json_int_t)h.pid)
					: json_null();
	json_t *state = read_json_at(dfd, "state.json");
	json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:o, s:o}", "name", name, "bytes",
			      json_integer_value(json_object_get(m, "bytes")), "entries",
			      json_integer_value(json_object_get(m, "entries")), "last_used",
			      json_integer_value(json_object_get(m, "last_used")), "held_by", held, "state",
			      state ? state : json_null());
	const char *lang = json_string_value(json_object_get(m, "lang"));
	if (lang)
		json_object_set_new(o, "lang", json_string(lang));
	json_decref(m);
	return o;
}

json_t *sb_ws_list(struct sb_ws_store *st, const char *client)
{
	json_t *out = json_array(), *names = names_of(st, client);
	size_t i;
	json_t *v;
	json_array_foreach(names, i, v) {
		json_t *o = sb_ws_info(st, client, json_string_value(v));
		if (o)
			json_array_append_new(out, o);
	}
	json_decref(names);
	return out;
}

json_t *sb_ws_clients(struct sb_ws_store *st)
{
	return dirs_in(st->root_fd, sb_ws_client_ok);
}

int sb_ws_remove(struct sb_ws_store *st, const char *client, const char *name, struct sb_error *err)
{
	int cl = sb_ws_client_lock(st, client, err);
	if (cl < 0)
		return -1;
	struct sb_ws ws;
	struct sb_ws_holder h = {.pid = (long)getpid(), .since = (long long)time(NULL)};
	int rc = sb_ws_open(st, client, name, false, &ws, err);
	if (!rc && !(rc = sb_ws_hold(&ws, &h, err))) {
		SB_AUTO_FD cfd = sb_fs_open_beneath(st->root_fd, client, O_PATH | O_DIRECTORY, 0);
		if (cfd < 0 || sb_fs_remove_at(cfd, name) < 0)
			rc = sb_fail_errno(err, "cannot remove workspace %s", name);
		sb_close(&ws.lock_fd); /* (its files are gone: nothing to note) */
	}
	sb_ws_close(&ws);
	sb_ws_client_unlock(cl);
	return rc;
}

void sb_ws_meta_write(struct sb_ws *ws, const char *lang)
{
	json_t *old = read_json_at(ws->dir_fd, "meta.json");
	json_t *m = json_pack("{s:I, s:I, s:I}", "bytes", (json_int_t)ws->bytes, "entries", (json_int_t)ws->entries,
			      "last_used", (json_int_t)time(NULL));
	const char *l = lang ? lang : json_string_value(json_object_get(old, "lang"));
	if (l)
		json_object_set_new(m, "lang", json_string(l));
	write_json_at(ws->dir_fd, "meta.json", m);
	json_decref(m);
	json_decref(old);
}

void sb_ws_state_write(struct sb_ws *ws, json_t *report)
{
	if (!json_is_object(report)) {
		json_decref(report);
		return;
	}
	json_object_set_new(report, "saved_at", json_integer((json_int_t)time(NULL)));
	write_json_at(ws->dir_fd, "state.json", report);
	json_decref(report);
}
