/* sagebox's state directory: $XDG_STATE_HOME/sagebox, or
 * ~/.local/state/sagebox (mode 0700, made on first use). The default HTTP
 * token lives there, and background jobs' logs (as unnamed files). */
#ifndef SAGEBOX_STATEDIR_H
#define SAGEBOX_STATEDIR_H

#include <stddef.h>

#include "util/error.h"

/* Its path into dir (created with its parents); 0, or -1 with why. */
int sb_state_dir(char *dir, size_t size, struct sb_error *err);

/* dir made 0700 (its parent must exist) and used only when it is a real
 * directory (not a symlink) of our euid that no one else may enter: a
 * directory another user could write to would let them put their own
 * socket or file where we look. 0, or -1 with why and the fix. */
int sb_private_dir(const char *dir, struct sb_error *err);

#endif
