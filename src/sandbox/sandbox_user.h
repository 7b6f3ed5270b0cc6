/* The sandbox user: the unprivileged host user a root caller becomes before
 * anything of a sandbox exists (the `sandbox_user` setting, a name or a
 * number), never root. The native backend's outer process becomes it, and
 * so do the network proxy and `sagebox packages add`, which run as it too. */
#ifndef SAGEBOX_SANDBOX_USER_H
#define SAGEBOX_SANDBOX_USER_H

#include <sys/types.h>

#include "util/error.h"

/* Resolve the sandbox user (name or number; "" is nobody) for a root
 * caller: -1 with err when it does not exist or is root. */
int sb_sandbox_user_resolve(const char *name, uid_t *uid, gid_t *gid, struct sb_error *err);
/* Become uid:gid for good: no supplementary groups, all three uids, and
 * root cannot be regained (checked). A process of one thread only (raw
 * system calls, no setxid broadcast). -1 with errno. */
int sb_sandbox_user_become(uid_t uid, gid_t gid);

#endif
