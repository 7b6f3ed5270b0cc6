#include "util/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 3, 0))) static void vfill(struct sb_error *err, int errnum, const char *fmt, va_list ap)
{
	if (!err)
		return;
	err->errnum = errnum;
	err->hint[0] = '\0';
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	if (errnum) {
		size_t n = strlen(err->msg);
		snprintf(err->msg + n, sizeof err->msg - n, ": %s", strerror(errnum));
	}
}

int sb_fail(struct sb_error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfill(err, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int sb_fail_errno(struct sb_error *err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	vfill(err, saved, fmt, ap);
	va_end(ap);
	errno = saved;
	return -1;
}

int sb_hint(struct sb_error *err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->hint, sizeof err->hint, fmt, ap);
		va_end(ap);
	}
	return -1;
}
