/* The registry of backends (registry.c), by name: the top of sandbox/,
 * above every backend. The rows themselves (struct sb_backend_type) are
 * described in sandbox.h; config needs only the names. */
#ifndef SAGEBOX_REGISTRY_H
#define SAGEBOX_REGISTRY_H

#include <stddef.h>

#include "util/error.h"

/* The setting value that picks the first row (native). */
#define SB_BACKEND_AUTO "auto"

struct sb_backend_type;
/* Every backend built in, in order of preference. */
const struct sb_backend_type *sb_backend_types(size_t *n);
/* The row for a setting value ("auto" included), or NULL. */
const struct sb_backend_type *sb_backend_type_find(const char *name);
/* The row that isolates nothing (host): runs a command on the host itself. */
const struct sb_backend_type *sb_backend_type_unisolated(void);
/* "auto|native|podman|docker|host": the setting's allowed values. */
const char *sb_backend_names(void);

struct sb_backend;
struct sb_backend_settings;
/* Open the backend of this name (a row, "auto" included) with these
 * settings: sb_backend_open_type of its row (sandbox.h). NULL with err
 * filled when it is not built in or cannot be opened. */
struct sb_backend *sb_backend_open(const char *name, const struct sb_backend_settings *s, struct sb_error *err);

#endif
