/* The workspaces' store (src/workspaces/): names, holds, the sync's checks
 * of what a session's controller sends (paths, order, the cap on disk,
 * holes), the journal's commit and its replay after a crash, restore and
 * copy walks that never follow a link or open a FIFO or device, removal.
 * The controller is played here by hand-made ops, including hostile ones. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "workspaces/fsafe.h"
#include "workspaces/store.h"
#include "workspaces/sync.h"
#include "workspaces/transfer.h"

static char root[256];

static json_t *op(const char *o, const char *path)
{
	return path ? json_pack("{s:s, s:s, s:i}", "op", o, "path", path, "mode", 0644) : json_pack("{s:s}", "op", o);
}

static int send_op(struct sb_ws_sync *s, json_t *h, const char *data, size_t n)
{
	int rc = sb_ws_sync_op(s, h, data, n);
	json_decref(h);
	return rc;
}

static int send_file(struct sb_ws_sync *s, const char *path, const char *data, size_t n, int mode)
{
	json_t *h = json_pack("{s:s, s:s, s:i, s:I}", "op", "file", "path", path, "mode", mode, "size", (json_int_t)n);
	int rc = send_op(s, h, NULL, 0);
	if (!rc && n)
		rc = send_op(s, json_pack("{s:s, s:i}", "op", "data", "offset", 0), data, n);
	return rc;
}

static char *slurp(const char *rel, size_t *n)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/sagebox/workspaces/local/thesis/files/%s", root, rel);
	FILE *f = fopen(p, "rb");
	if (!f)
		return NULL;
	static char buf[1 << 16];
	*n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	return buf;
}

static bool in_store(const char *rel)
{
	char p[1024];
	struct stat st;
	snprintf(p, sizeof p, "%s/sagebox/workspaces/local/thesis/files/%s", root, rel);
	return lstat(p, &st) == 0;
}

struct seen {
	char log[4096];
	uint64_t bytes;
};

static int emit(void *ctx, const struct sb_ws_item *it, uint64_t off, const char *data, size_t n)
{
	struct seen *s = ctx;
	(void)off, (void)data;
	if (!n) {
		size_t l = strlen(s->log);
		snprintf(s->log + l, sizeof s->log - l, "%s%s%s;", it->path, it->dir ? "/" : "", it->exec ? "*" : "");
	}
	s->bytes += n;
	return 0;
}

int main(void)
{
	/* ---- names */
	CHECK(sb_ws_name_check("thesis", NULL));
	CHECK(sb_ws_name_check("a.b_c-9", NULL));
	CHECK(!sb_ws_name_check(".", NULL) && !sb_ws_name_check("..", NULL) && !sb_ws_name_check("", NULL));
	CHECK(!sb_ws_name_check("a/b", NULL) && !sb_ws_name_check("a b", NULL) && !sb_ws_name_check("é", NULL));
	char long_name[80];
	memset(long_name, 'x', 65);
	long_name[65] = '\0';
	CHECK(!sb_ws_name_check(long_name, NULL));
	char client[SB_WS_CLIENT_MAX];
	CHECK(sb_ws_client_of_token("alice@lab", client, sizeof client, NULL) == 0 && !strcmp(client, "token-alice@lab"));
	CHECK(sb_ws_client_of_token("../x", client, sizeof client, NULL) < 0);
	CHECK(sb_ws_client_ok("local") && !sb_ws_client_ok("token-") && !sb_ws_client_ok("../local"));
	CHECK(sb_fs_relpath_ok("a/b.txt") && sb_fs_relpath_ok(".local/lib"));
	CHECK(!sb_fs_relpath_ok("/etc") && !sb_fs_relpath_ok("a/../b") && !sb_fs_relpath_ok("a//b") &&
	      !sb_fs_relpath_ok("..") && !sb_fs_relpath_ok("a/./b") && !sb_fs_relpath_ok("a\nb") &&
	      !sb_fs_relpath_ok("\xff") && !sb_fs_relpath_ok(""));

	/* ---- a store in a temporary data directory */
	snprintf(root, sizeof root, "/tmp/sb-ws-test-XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	setenv("XDG_DATA_HOME", root, 1);
	struct sb_ws_store st;
	struct sb_error err = {0};
	CHECK(sb_ws_store_open(&st, false, &err) < 0 && err.errnum == ENOENT);
	CHECK(sb_ws_store_open(&st, true, &err) == 0);
	struct stat sst;
	CHECK(fstat(st.root_fd, &sst) == 0 && (sst.st_mode & 0777) == 0700);

	struct sb_ws ws, ws2;
	CHECK(sb_ws_open(&st, "local", "nope", false, &ws, &err) < 0 && err.errnum == ENOENT);
	CHECK(sb_ws_open(&st, "local", "thesis", true, &ws, &err) == 0 && ws.created);
	struct sb_ws_holder h = {.pid = getpid(), .cap = 1 << 20};
	snprintf(h.session, sizeof h.session, "s_one");
	CHECK(sb_ws_hold(&ws, &h, &err) == 0);
	/* A second hold (another open of the same workspace) names the first. */
	CHECK(sb_ws_open(&st, "local", "thesis", true, &ws2, &err) == 0 && !ws2.created);
	CHECK(sb_ws_hold(&ws2, &h, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "in use by session s_one");
	sb_ws_close(&ws2);
	/* Another client's "thesis" is another workspace. */
	CHECK(sb_ws_open(&st, "token-bob", "thesis", true, &ws2, &err) == 0 && ws2.created);
	CHECK(sb_ws_hold(&ws2, &h, &err) == 0);
	sb_ws_close(&ws2);

	/* ---- a sync: files, a directory, data, a skip */
	struct sb_ws_sync *s = sb_ws_sync_begin(&ws, false, &err);
	CHECK(s != NULL);
	CHECK(send_op(s, op("dir", "notes"), NULL, 0) == 0);
	CHECK(send_file(s, "notes/a.txt", "hello", 5, 0644) == 0);
	CHECK(send_file(s, "run.sh", "#!/bin/sh\n", 10, 04755) == 0);
	CHECK(send_op(s, json_pack("{s:s, s:s, s:s}", "op", "skip", "path", "link", "why", "a symbolic link"), NULL, 0) == 0);
	json_t *report = NULL;
	CHECK(sb_ws_sync_end(s, &report, &err) == 0);
	CHECK(json_integer_value(json_object_get(report, "files")) == 2);
	CHECK(json_array_size(json_object_get(report, "skipped")) == 1);
	json_decref(report);
	size_t n;
	char *got = slurp("notes/a.txt", &n);
	CHECK(got && n == 5 && !memcmp(got, "hello", 5));
	char p[1024];
	snprintf(p, sizeof p, "%s/sagebox/workspaces/local/thesis/files/run.sh", root);
	CHECK(stat(p, &sst) == 0 && (sst.st_mode & 07777) == 0700); /* exec kept, setuid dropped */
	snprintf(p, sizeof p, "%s/sagebox/workspaces/local/thesis/stage", root);
	CHECK(access(p, F_OK) < 0); /* the stage is gone */
	CHECK(ws.entries == 3);

	/* ---- hostile ops spoil the sync; the store stays as it was */
	const char *bad_paths[] = {"../escape", "/etc/passwd", "a//b", "notes/../../x", ""};
	for (size_t i = 0; i < sizeof bad_paths / sizeof *bad_paths; i++) {
		s = sb_ws_sync_begin(&ws, false, &err);
		CHECK(send_file(s, bad_paths[i], "x", 1, 0644) < 0);
		CHECK(sb_ws_sync_end(s, NULL, &err) < 0);
	}
	s = sb_ws_sync_begin(&ws, false, &err);
	CHECK(send_file(s, "twice", "x", 1, 0644) == 0);
	CHECK(send_file(s, "twice", "y", 1, 0644) < 0);
	sb_ws_sync_abort(s);
	CHECK(!in_store("twice"));
	s = sb_ws_sync_begin(&ws, false, &err);
	CHECK(send_op(s, json_pack("{s:s, s:s}", "op", "del", "path", "notes"), NULL, 0) == 0);
	CHECK(send_file(s, "notes/new", "x", 1, 0644) < 0); /* beneath what it removes */
	CHECK(sb_ws_sync_end(s, NULL, &err) < 0);
	CHECK(in_store("notes/a.txt"));
	s = sb_ws_sync_begin(&ws, false, &err);
	CHECK(send_op(s, json_pack("{s:s, s:s, s:i, s:i}", "op", "file", "path", "f", "mode", 0644, "size", 10), NULL, 0) == 0);
	CHECK(send_op(s, json_pack("{s:s, s:i}", "op", "data", "offset", 8), "abc", 3) < 0); /* past its size */
	sb_ws_sync_abort(s);
	s = sb_ws_sync_begin(&ws, false, &err);
	CHECK(send_op(s, json_pack("{s:s}", "op", "data"), "abc", 3) < 0); /* data without a file */
	sb_ws_sync_abort(s);
	s = sb_ws_sync_begin(&ws, false, &err);
	CHECK(send_op(s, json_pack("{s:s, s:s}", "op", "chmod", "path", "x"), NULL, 0) < 0);
	sb_ws_sync_abort(s);

	/* ---- the cap on disk: refused before anything past it lands */
	s = sb_ws_sync_begin(&ws, false, &err);
	static char big[1 << 20];
	memset(big, 'x', sizeof big);
	CHECK(send_file(s, "big", big, sizeof big, 0644) < 0);
	CHECK(sb_ws_sync_failed(s, &err) && err.errnum == ENOSPC);
	CHECK(sb_ws_sync_end(s, NULL, &err) < 0);
	CHECK(!in_store("big"));
	/* ... and a sparse file of 1 GiB with 4 KiB of data fits. */
	s = sb_ws_sync_begin(&ws, false, &err);
	CHECK(send_op(s, json_pack("{s:s, s:s, s:i, s:I}", "op", "file", "path", "sparse", "mode", 0644, "size",
				   (json_int_t)1 << 30), NULL, 0) == 0);
	CHECK(send_op(s, json_pack("{s:s, s:I}", "op", "data", "offset", (json_int_t)(1 << 29)), big, 4096) == 0);
	CHECK(sb_ws_sync_end(s, NULL, &err) == 0);
	snprintf(p, sizeof p, "%s/sagebox/workspaces/local/thesis/files/sparse", root);
	CHECK(stat(p, &sst) == 0 && sst.st_size == 1 << 30 && sb_fs_alloc(&sst) <= 64 * 1024);
	CHECK(ws.bytes <= ws.cap);

	/* ---- a removal, and a file replacing a directory */
	s = sb_ws_sync_begin(&ws, false, &err);
	CHECK(send_op(s, json_pack("{s:s, s:s}", "op", "del", "path", "sparse"), NULL, 0) == 0);
	CHECK(send_file(s, "notes", "now a file", 10, 0644) == 0);
	CHECK(sb_ws_sync_end(s, NULL, &err) == 0);
	CHECK(!in_store("sparse") && !in_store("notes/a.txt"));
	got = slurp("notes", &n);
	CHECK(got && n == 10);

	/* ---- a crash after the commit: the next hold applies the journal */
	s = sb_ws_sync_begin(&ws, false, &err);
	CHECK(send_file(s, "after-crash", "kept", 4, 0644) == 0);
	/* (the commit without the apply, as a SIGKILL between them leaves it) */
	snprintf(p, sizeof p, "%s/sagebox/workspaces/local/thesis/stage/journal", root);
	FILE *jf = fopen(p, "w");
	CHECK(jf != NULL);
	fputs("{\"v\":1,\"full\":false,\"del\":[\"run.sh\"],\"dir\":[],\"file\":[[\"after-crash\",\"f1\"]]}", jf);
	fclose(jf);
	/* its data was staged; the in-memory sync is simply lost */
	json_t *empty = json_object();
	CHECK(sb_ws_sync_op(s, empty, NULL, 0) < 0);
	json_decref(empty);
	sb_ws_release(&ws);
	CHECK(sb_ws_hold(&ws, &h, &err) == 0);
	CHECK(in_store("after-crash") && !in_store("run.sh"));
	/* (s's stage was consumed by the replay) */
	CHECK(sb_ws_sync_end(s, NULL, &err) < 0);
	/* A sync that never committed is discarded at the next hold. */
	s = sb_ws_sync_begin(&ws, false, &err);
	CHECK(send_file(s, "uncommitted", "lost", 4, 0644) == 0);
	sb_ws_release(&ws);
	CHECK(sb_ws_hold(&ws, &h, &err) == 0);
	CHECK(!in_store("uncommitted"));
	sb_ws_sync_abort(s);

	/* ---- a full sync replaces everything */
	s = sb_ws_sync_begin(&ws, true, &err);
	CHECK(send_file(s, "only", "1", 1, 0644) == 0);
	CHECK(sb_ws_sync_end(s, NULL, &err) == 0);
	CHECK(in_store("only") && !in_store("after-crash") && !in_store("notes") && ws.entries == 1);

	/* ---- things someone put into the store by hand: never followed */
	snprintf(p, sizeof p, "%s/sagebox/workspaces/local/thesis/files/passwd", root);
	CHECK(symlink("/etc/passwd", p) == 0);
	snprintf(p, sizeof p, "%s/sagebox/workspaces/local/thesis/files/fifo", root);
	CHECK(mkfifo(p, 0600) == 0);
	snprintf(p, sizeof p, "%s/sagebox/workspaces/local/thesis/files/dirlink", root);
	CHECK(symlink("/etc", p) == 0);
	/* a hard link to a file outside the workspace */
	char outside[300];
	snprintf(outside, sizeof outside, "%s/outside-secret", root);
	FILE *of = fopen(outside, "w");
	CHECK(of && fputs("secret", of) >= 0 && fclose(of) == 0);
	snprintf(p, sizeof p, "%s/sagebox/workspaces/local/thesis/files/hardlink", root);
	CHECK(link(outside, p) == 0);
	struct seen seen = {"", 0};
	json_t *skipped = json_array();
	unsigned more = 0;
	CHECK(sb_ws_restore_walk(&ws, NULL, emit, &seen, skipped, &more, &err) == 0);
	CHECK(!strcmp(seen.log, "only;") && seen.bytes == 1);
	CHECK(json_array_size(skipped) == 4);
	json_decref(skipped);
	struct stat sbuf;
	CHECK(sb_fs_open_regular(ws.files_fd, "fifo", &sbuf) < 0 && errno == ENXIO && S_ISFIFO(sbuf.st_mode));
	CHECK(sb_fs_open_beneath(ws.files_fd, "dirlink/passwd", O_RDONLY, 0) < 0);
	CHECK(sb_fs_open_regular(ws.files_fd, "passwd", &sbuf) < 0);

	/* ---- copy out (export) skips them too */
	char out[300];
	snprintf(out, sizeof out, "%s/export", root);
	CHECK(mkdir(out, 0755) == 0);
	int dst = open(out, O_PATH | O_DIRECTORY);
	struct sb_ws_copy_modes modes = {0644, 0755, 0755};
	skipped = json_array();
	uint64_t bytes, entries;
	CHECK(sb_ws_copy_tree(ws.files_fd, dst, &modes, 1 << 20, 100, skipped, &more, &bytes, &entries, &err) == 0);
	CHECK(entries == 2 && json_array_size(skipped) == 3); /* (a copy takes a hard-linked file's data) */
	json_decref(skipped);
	close(dst);
	snprintf(p, sizeof p, "%s/export/only", root);
	CHECK(lstat(p, &sbuf) == 0 && S_ISREG(sbuf.st_mode));
	snprintf(p, sizeof p, "%s/export/passwd", root);
	CHECK(lstat(p, &sbuf) < 0);

	/* ---- caps across a client's workspaces, listing, removal */
	CHECK(sb_ws_cap_for(&st, "local", "other", 1 << 20, 3 << 20) == 1 << 20);
	CHECK(sb_ws_cap_for(&st, "local", "other", 4 << 20, 3 << 20) == 2 << 20); /* thesis is held at 1 MiB */
	json_t *list = sb_ws_list(&st, "local");
	CHECK(json_array_size(list) == 1);
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(list, 0), "name")), "thesis"));
	CHECK(json_is_object(json_object_get(json_array_get(list, 0), "held_by")));
	json_decref(list);
	CHECK(sb_ws_remove(&st, "local", "thesis", &err) < 0); /* held */
	sb_ws_close(&ws);
	list = sb_ws_list(&st, "local");
	CHECK(json_is_null(json_object_get(json_array_get(list, 0), "held_by")));
	json_decref(list);
	CHECK(sb_ws_remove(&st, "local", "thesis", &err) == 0);
	list = sb_ws_list(&st, "local");
	CHECK(json_array_size(list) == 0);
	json_decref(list);

	sb_ws_store_close(&st);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
	return check_summary();
}
