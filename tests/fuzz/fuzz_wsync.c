/* Fuzz target: a workspace's sync as the host takes it (workspaces/sync.c)
 * from a session's controller, which runs inside the sandbox beside the
 * model's code: every op is untrusted.
 *
 * Input: ops, each a JSON header on one line; a header with "n": K is
 * followed by K raw bytes, its payload (a data op's bytes). They go to one
 * sync of a workspace held with a 64 KiB cap (a store in a temporary
 * directory, emptied before each input), which is then committed.
 * Checked, whatever the ops: nothing but regular files and directories is
 * in the store, every name in it is a plain relative path, the files take
 * at most the cap on disk, no stage is left, and nothing appears beside
 * the store (a file outside it, planted before, keeps its bytes and no new
 * entry is made next to it). */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workspaces/fsafe.h"
#include "workspaces/store.h"
#include "workspaces/sync.h"

#define CAP (64u << 10)

static char root[256], outside[300];
static struct sb_ws_store st;
static struct sb_ws ws;

static void setup(void)
{
	snprintf(root, sizeof root, "/tmp/sb-fuzz-wsync-XXXXXX");
	if (!mkdtemp(root))
		abort();
	setenv("XDG_DATA_HOME", root, 1);
	snprintf(outside, sizeof outside, "%s/outside", root);
	FILE *f = fopen(outside, "w");
	if (!f || fputs("planted", f) < 0 || fclose(f))
		abort();
	struct sb_error err = {0};
	struct sb_ws_holder h = {.pid = getpid(), .cap = CAP};
	if (sb_ws_store_open(&st, true, &err) || sb_ws_open(&st, "local", "fuzz", true, &ws, &err) ||
	    sb_ws_hold(&ws, &h, &err))
		abort();
}

static int entries_beside(void)
{
	DIR *d = opendir(root);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

struct check {
	uint64_t bytes;
};

static int check_fn(void *ctx, const char *rel, const struct stat *s)
{
	struct check *c = ctx;
	if (!sb_fs_relpath_ok(rel) || !(S_ISREG(s->st_mode) || S_ISDIR(s->st_mode)) || (s->st_mode & 07000))
		abort();
	if (S_ISREG(s->st_mode))
		c->bytes += sb_fs_alloc(s);
	return 0;
}

static void empty_store(void)
{
	int d = openat(ws.files_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = d < 0 ? NULL : fdopendir(d);
	if (!dir && d >= 0)
		close(d);
	char names[256][256];
	int n = 0;
	for (struct dirent *e; dir && (e = readdir(dir)) && n < 256;)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			snprintf(names[n++], sizeof names[0], "%s", e->d_name);
	if (dir)
		closedir(dir);
	for (int i = 0; i < n; i++)
		sb_fs_remove_at(ws.files_fd, names[i]);
	ws.bytes = ws.entries = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready) {
		setup();
		ready = 1;
	}
	int before = entries_beside();
	empty_store();
	struct sb_error err = {0};
	struct sb_ws_sync *s = sb_ws_sync_begin(&ws, size && (data[0] & 1), &err);
	if (!s)
		abort();
	size_t off = size ? 1 : 0;
	while (off < size) {
		const char *line = (const char *)data + off;
		const char *nl = memchr(line, '\n', size - off);
		size_t len = nl ? (size_t)(nl - line) : size - off;
		json_t *h = json_loadb(line, len, 0, NULL);
		off += len + (nl ? 1 : 0);
		size_t n = 0;
		if (json_is_integer(json_object_get(h, "n")) && json_integer_value(json_object_get(h, "n")) > 0)
			n = (size_t)json_integer_value(json_object_get(h, "n"));
		if (n > size - off)
			n = size - off;
		if (h)
			sb_ws_sync_op(s, h, (const char *)data + off, n);
		off += n;
		json_decref(h);
	}
	json_t *report = NULL;
	sb_ws_sync_end(s, &report, &err);
	json_decref(report);
	struct check c = {0};
	sb_fs_walk(ws.files_fd, check_fn, &c);
	if (c.bytes > CAP)
		abort();
	struct stat sbuf;
	if (fstatat(ws.dir_fd, "stage", &sbuf, AT_SYMLINK_NOFOLLOW) == 0)
		abort();
	char buf[16] = "";
	FILE *f = fopen(outside, "r");
	if (!f || !fgets(buf, sizeof buf, f) || strcmp(buf, "planted"))
		abort();
	fclose(f);
	if (entries_beside() != before)
		abort();
	return 0;
}
