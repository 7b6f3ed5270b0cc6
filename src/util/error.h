/* Error objects: library code returns -1 and fills one; only the CLI decides
 * to exit (the crun convention). A sandbox failure (internal) is kept apart
 * from a verdict on the user's code (the isolate convention). */
#ifndef SAGEBOX_ERROR_H
#define SAGEBOX_ERROR_H

#include <stdarg.h>

struct sb_error {
	int errnum;        /* errno at the failure, 0 if none */
	char msg[1024];    /* what failed, in words a user can act on */
	char hint[1024];   /* how to fix it; empty when there is nothing to say */
};

/* Fill err (may be NULL) and return -1, so callers can `return sb_fail(...)`. */
int sb_fail(struct sb_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Same, appending ": strerror(errno)" and recording errno. */
int sb_fail_errno(struct sb_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Set the hint of an already filled error; returns -1. */
int sb_hint(struct sb_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
