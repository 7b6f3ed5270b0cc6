/* The operations each built-in backend exports, for the registry
 * (registry.c) and nothing else: callers go through sandbox.h. */
#ifndef SAGEBOX_BACKENDS_H
#define SAGEBOX_BACKENDS_H

#include "sandbox/sandbox.h"

extern const struct sb_backend_ops sb_native_ops; /* native/spawn.c */
extern const struct sb_backend_ops sb_podman_ops; /* podman/spawn.c */
extern const struct sb_backend_ops sb_docker_ops; /* podman/spawn.c */
extern const struct sb_backend_ops sb_host_ops;   /* host.c */

#endif
