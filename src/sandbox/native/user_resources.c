/* Per-user kernel resources (sandbox/user_resources.c), the namespace part:
 * in the outer process, right after it created the namespaces and while it
 * still holds every capability in them, write the sandbox's own limits into
 * /proc/sys/user of its user namespace (what is created inside is counted
 * there and again against the host user, so a limit of 0 here keeps the
 * host user's count untouched). The rlimit rows are applied by the command
 * (limits.c). */
#include <errno.h>
#include <stdio.h>

#include "sandbox/native/native.h"
#include "sandbox/user_resources.h"

int nat_limit_user_resources(uint32_t *applied, const char **failed)
{
	size_t n;
	const struct sb_user_resource *rows = sb_user_resources(&n);
	*applied = 0;
	for (size_t i = 0; i < n && i < 32; i++) {
		const struct sb_user_resource *r = &rows[i];
		char path[96], value[24];
		if (r->kind == SB_URES_RLIMIT)
			continue;
		/* /proc/sys resolves these by the writer's own namespaces: the
		 * sandbox's, not the host's. */
		snprintf(path, sizeof path, "/proc/sys/user/%s", r->name);
		nat_fmt_u(value, sizeof value, r->value);
		if (nat_write_file(path, value) == 0) {
			*applied |= 1u << i;
		} else if (errno != ENOENT) {
			*failed = r->name; /* ENOENT: this kernel has no such limit (and no such resource) */
			return -1;
		}
	}
	return 0;
}
