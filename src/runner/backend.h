/* The backend as the runner opens it (sandbox/sandbox.h): its settings
 * from the configuration, with the runner's policy, e.g. how many sandboxes
 * may exist at once (pool, job slots, sessions). */
#ifndef SAGEBOX_RUNNER_BACKEND_H
#define SAGEBOX_RUNNER_BACKEND_H

#include "config/config.h"
#include "util/error.h"

struct sb_backend;
struct sb_backend_settings;
void sb_runner_backend_settings(const struct sb_config *cfg, struct sb_backend_settings *s);
/* The backend cfg names, opened with those settings (NULL with err). */
struct sb_backend *sb_runner_backend_open(const struct sb_config *cfg, struct sb_error *err);

#endif
