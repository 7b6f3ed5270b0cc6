/* The report channel: fixed-size records from the children to the caller,
 * so an error deep in the setup comes back as a message spawn() can return
 * (crun's convention) instead of a dead child. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/exit_status.h"
#include "sandbox/native/native.h"
#include "util/fd.h"

void nat_report(int fd, const struct nat_msg *m)
{
	SB_RETRY_EINTR(write(fd, m, sizeof *m));
}

__attribute__((format(printf, 4, 0))) static noreturn void vfail(const char *stage, int errnum, const char *hint,
									const char *fmt, va_list ap)
{
	static struct nat_msg m; /* static: keep the small child stacks small */
	memset(&m, 0, sizeof m);
	m.kind = NAT_MSG_ERROR;
	m.errnum = errnum;
	snprintf(m.stage, sizeof m.stage, "%s", stage);
	vsnprintf(m.msg, sizeof m.msg, fmt, ap);
	if (errnum) {
		size_t n = strlen(m.msg);
		snprintf(m.msg + n, sizeof m.msg - n, ": %s", strerror(errnum));
	}
	if (hint)
		snprintf(m.hint, sizeof m.hint, "%s", hint);
	nat_report(NAT_FD_REPORT, &m);
	_exit(SB_EXIT_SANDBOX);
}

noreturn void nat_child_fail(const char *stage, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(stage, errnum, NULL, fmt, ap);
}

noreturn void nat_child_fail_hint(const char *stage, int errnum, const char *hint, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(stage, errnum, hint, fmt, ap);
}

int nat_write_file(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = strlen(data);
	ssize_t w = SB_RETRY_EINTR(write(fd, data, len));
	int saved = errno;
	close(fd);
	if (w != (ssize_t)len) {
		errno = w < 0 ? saved : EIO;
		return -1;
	}
	return 0;
}

void nat_fmt_u(char *buf, size_t n, unsigned long long v)
{
	char tmp[24];
	size_t i = 0;
	do {
		tmp[i++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && i < sizeof tmp);
	size_t j = 0;
	while (i && j + 1 < n)
		buf[j++] = tmp[--i];
	if (n)
		buf[j] = '\0';
}
