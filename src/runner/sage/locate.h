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
#include "runner/sage/found.h"
#include "sandbox/sandbox.h"
#include "util/error.h"

/* Find the python for cfg on the open backend be, set cfg->python (and
 * cfg->sage, when it was found on PATH) and fill f. -1 with err naming what
 * was tried and the setting to set. */
int sb_sage_locate(const struct sb_backend *be, struct sb_config *cfg, struct sb_sage_found *f,
		   struct sb_error *err);
void sb_sage_found_clear(struct sb_sage_found *f);
/* For status: {python, how, sage, sage_version, prefix, base_prefix, cache, binds, path}. */
json_t *sb_sage_found_json(const struct sb_sage_found *f);

#endif
