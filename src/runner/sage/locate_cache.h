/* The cache of locate.c's answers: one JSON file under
 * $XDG_CACHE_HOME/sagebox, keyed by what an answer depends on. */
#ifndef SAGEBOX_LOCATE_CACHE_H
#define SAGEBOX_LOCATE_CACHE_H

#include <stdbool.h>

#include "runner/sage/found.h"

/* The cached answer for key into f (python, version, prefixes, how); false
 * when there is none or no cache directory. */
bool sb_locate_cache_get(const char *key, struct sb_sage_found *f);
/* Remember f for key (best effort: a cache that cannot be written is
 * skipped, the answer is still used). */
void sb_locate_cache_put(const char *key, const struct sb_sage_found *f);

#endif
