/* What was found of Sage's Python, and how (runner/sage/locate.h finds
 * it, locate_cache.c keeps it). */
#ifndef SAGEBOX_SAGE_FOUND_H
#define SAGEBOX_SAGE_FOUND_H

#include <jansson.h>
#include <limits.h>

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

#endif
