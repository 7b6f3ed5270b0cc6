/* Sage's Python, found by itself: unless `python` is set, the
 * sage that will run the code is asked once (`sage --python -c ...` prints
 * sys.executable, sys.prefix, sys.base_prefix and Sage's version) and the
 * answer is cached under $XDG_CACHE_HOME/sagebox, keyed by what it depends
 * on: the image's ID for podman/docker, the asked program's path, size and
 * mtime for native/host. Native gets the installation's prefix bound
 * read-only when it lies outside the system directories it binds. */
#ifndef SAGEBOX_LOCATE_H
#define SAGEBOX_LOCATE_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>

#include "config/config.h"
#include "sandbox/sandbox.h"
#include "util/error.h"

struct sb_sage_found {
	char python[PATH_MAX];      /* what the workers run */
	char sage[PATH_MAX];        /* the sage that was asked (or would be) */
	char version[64];           /* Sage's version; "" when none imports */
	char prefix[PATH_MAX];      /* the python's sys.prefix, "" unknown */
	char base_prefix[PATH_MAX]; /* and sys.base_prefix */
	char how[512];              /* in words: the setting, or what was asked */
	char cache[PATH_MAX];       /* the cache file the answer came from, or "" */
	json_t *binds;              /* native: what was bound, or NULL (owned) */
	json_t *path;               /* native: the dirs put first on PATH, or NULL (owned) */
};

/* Find the python for cfg on the open backend be, set cfg->python (and
 * cfg->sage, when it was found on PATH) and fill f. -1 with err naming what
 * was tried and the setting to set. */
int sb_sage_locate(const struct sb_backend *be, struct sb_config *cfg, struct sb_sage_found *f,
		   struct sb_error *err);
void sb_sage_found_clear(struct sb_sage_found *f);
/* For status: {python, how, sage, sage_version, prefix, base_prefix, cache, binds, path}. */
json_t *sb_sage_found_json(const struct sb_sage_found *f);

/* ---- locate_ask.c: run argv in a sandbox of be ---- */
/* 1 and *answer (the JSON after the line's mark) when it answered; 0 with
 * said filled when the program did not; -1 with err filled when the
 * sandbox itself could not start (that error is the one to report). */
int sb_locate_ask(const struct sb_backend *be, const struct sb_config *cfg, const char *const *argv, const char *mark,
		  json_t **answer, char *said, size_t sn, struct sb_error *err);

/* ---- locate_cache.c: the answers, one JSON file ---- */
/* The cached answer for key into f (python, version, prefixes, how); false
 * when there is none or no cache directory. */
bool sb_locate_cache_get(const char *key, struct sb_sage_found *f);
/* Remember f for key (best effort: a cache that cannot be written is
 * skipped, the answer is still used). */
void sb_locate_cache_put(const char *key, const struct sb_sage_found *f);

#endif
