/* sagebox's state directory: $XDG_STATE_HOME/sagebox, or
 * ~/.local/state/sagebox (mode 0700, made on first use). The default HTTP
 * token lives there, and background jobs' logs (as unnamed files). */
#ifndef SAGEBOX_STATEDIR_H
#define SAGEBOX_STATEDIR_H

#include <stddef.h>

#include "util/error.h"

/* Its path into dir (created with its parents); 0, or -1 with why. */
int sb_state_dir(char *dir, size_t size, struct sb_error *err);

#endif
