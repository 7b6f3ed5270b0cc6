/* Kernel resources counted per host user (or per namespace) that a job could
 * hold to starve other sandboxes and the user's own programs (128
 * inotify instances and ~96k queued signals made inotify and
 * timer_create fail for every process of the uid). One table of what one
 * sandbox may hold; native applies every row (rlimits in the command,
 * /proc/sys/user of its own user namespace), podman/docker the rlimit rows
 * (--ulimit), and the syscall policy refuses what the engines cannot count
 * (inotify, fanotify, POSIX message queues, new namespaces).
 *
 * The arithmetic: a row's value is what ONE sandbox may hold. The host user
 * keeps its own limit minus (value x sandboxes running at once); status
 * shows that sum against this host's limit for every rlimit row. */
#ifndef SAGEBOX_USER_RESOURCES_H
#define SAGEBOX_USER_RESOURCES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sb_ures_kind {
	SB_URES_RLIMIT,      /* setrlimit(key) in the sandbox (podman: --ulimit name=) */
	SB_URES_USERNS,      /* /proc/sys/user/<name> of the sandbox's own user namespace */
};

struct sb_user_resource {
	const char *name;     /* rlimit: podman's --ulimit name; sysctl: the file name */
	enum sb_ures_kind kind;
	int rlimit;           /* RLIMIT_* for SB_URES_RLIMIT */
	uint64_t value;       /* what one sandbox may hold */
	const char *counts;   /* what is counted, and where */
	const char *stops;
};

const struct sb_user_resource *sb_user_resources(size_t *n);

/* For status: each row with its value and, for rlimits, this process's own
 * limit and the share `sandboxes` sandboxes at once would take of it. */
json_t *sb_user_resources_json(unsigned sandboxes);

#endif
