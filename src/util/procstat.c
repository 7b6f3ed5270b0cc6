/* /proc/<pid>/stat: "pid (comm) state ppid ... arg_start arg_end ...". */
#include "util/procstat.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "util/fd.h"

/* "/proc/<pid>/stat" without snprintf (not async-signal-safe). */
static void stat_path(pid_t pid, char out[32])
{
	char digits[24];
	int n = 0;
	unsigned long v = (unsigned long)pid;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof digits);
	char *p = out;
	memcpy(p, "/proc/", 6);
	p += 6;
	while (n)
		*p++ = digits[--n];
	memcpy(p, "/stat", 6);
}

int sb_proc_stat_fields(pid_t pid, int first, int count, unsigned long long *out)
{
	if (first < 4 || count < 1)
		return -1;
	char path[32], buf[2048];
	if (pid > 0)
		stat_path(pid, path);
	else
		memcpy(path, "/proc/self/stat", sizeof "/proc/self/stat");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = sb_read_retry(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The command name may hold spaces and ')' (a process names itself):
	 * the fields start after the last ')'. */
	const char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	p++;
	for (int field = 3; field < first + count; field++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return -1;
		unsigned long long v = 0;
		int neg = *p == '-';
		if (neg)
			p++;
		const char *start = p;
		while (*p >= '0' && *p <= '9')
			v = v * 10 + (unsigned long long)(*p++ - '0');
		if (field >= first) {
			if (p == start || (*p && *p != ' ' && *p != '\n'))
				return -1;
			out[field - first] = neg ? 0 : v; /* none we read is negative */
		}
		while (*p && *p != ' ')
			p++;
	}
	return 0;
}
