/* The cache of runner/sage/locate.c: $XDG_CACHE_HOME/sagebox/sage-python.json
 * (~/.cache/...), one object {key: answer}. Written whole to a temporary
 * file and renamed, so two sagebox processes never leave half a file. */
#include "runner/sage/locate_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_NAME "sage-python.json"
#define CACHE_MAX_ENTRIES 32 /* images come and go: past this, start over */

/* The directory (created 0700) or -1. */
static int cache_dir(char *out, size_t n, bool create)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int r;
	if (xdg && xdg[0] == '/')
		r = snprintf(out, n, "%s/sagebox", xdg);
	else if (home && home[0] == '/')
		r = snprintf(out, n, "%s/.cache/sagebox", home);
	else
		return -1;
	if (r < 0 || (size_t)r >= n)
		return -1;
	if (!create)
		return 0;
	char parent[PATH_MAX];
	snprintf(parent, sizeof parent, "%s", out);
	*strrchr(parent, '/') = '\0';
	if (mkdir(parent, 0700) != 0 && errno != EEXIST)
		return -1;
	if (mkdir(out, 0700) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

static json_t *load(char *path, size_t n, bool create)
{
	char dir[PATH_MAX];
	if (cache_dir(dir, sizeof dir, create) != 0 || (size_t)snprintf(path, n, "%s/" CACHE_NAME, dir) >= n)
		return NULL;
	json_t *j = json_load_file(path, 0, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		j = json_object();
	}
	return j;
}

static void str(char *dst, size_t n, const json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	snprintf(dst, n, "%s", v ? v : "");
}

bool sb_locate_cache_get(const char *key, struct sb_sage_found *f)
{
	char path[PATH_MAX];
	json_t *j = load(path, sizeof path, false);
	const json_t *e = json_object_get(j, key);
	const char *py = json_string_value(json_object_get(e, "python"));
	bool hit = py && py[0] == '/';
	if (hit) {
		str(f->python, sizeof f->python, e, "python");
		str(f->version, sizeof f->version, e, "version");
		str(f->prefix, sizeof f->prefix, e, "prefix");
		str(f->base_prefix, sizeof f->base_prefix, e, "base_prefix");
		str(f->how, sizeof f->how, e, "how");
		snprintf(f->cache, sizeof f->cache, "%s", path);
	}
	json_decref(j);
	return hit;
}

void sb_locate_cache_put(const char *key, const struct sb_sage_found *f)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	json_t *j = load(path, sizeof path, true);
	if (!j)
		return;
	if (json_object_size(j) >= CACHE_MAX_ENTRIES)
		json_object_clear(j);
	json_object_set_new(j, key, json_pack("{s:s, s:s, s:s, s:s, s:s}", "python", f->python, "version", f->version,
					      "prefix", f->prefix, "base_prefix", f->base_prefix, "how", f->how));
	snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
	if (json_dump_file(j, tmp, JSON_INDENT(1) | JSON_SORT_KEYS) == 0) {
		if (rename(tmp, path) != 0)
			unlink(tmp);
	} else {
		unlink(tmp);
	}
	json_decref(j);
}
