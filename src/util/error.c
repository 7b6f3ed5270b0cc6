#include "core/exit_status.h"
#include "util/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void vfill(struct sb_error *err, int errnum, const char *fmt, va_list ap)
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

void sb_error_clear(struct sb_error *err)
{
	if (err) {
		err->errnum = 0;
		err->msg[0] = '\0';
		err->hint[0] = '\0';
	}
}

static noreturn void vdie(int errnum, const char *fmt, va_list ap)
{
	char buf[1200];
	int n = snprintf(buf, sizeof buf, "sagebox: ");
	n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	if (errnum)
		n += snprintf(buf + n, sizeof buf - (size_t)n, ": %s", strerror(errnum));
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	/* write(2), not stdio: this may run in a child between clone and exec. */
	ssize_t w = write(STDERR_FILENO, buf, (size_t)n);
	(void)w;
	_exit(SB_EXIT_SANDBOX);
}

noreturn void sb_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vdie(0, fmt, ap);
}

noreturn void sb_die_errno(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	vdie(saved, fmt, ap);
}
