/* Numeric fields of /proc/<pid>/stat, the one parser of that line. */
#ifndef SAGEBOX_PROCSTAT_H
#define SAGEBOX_PROCSTAT_H

#include <sys/types.h>

/* Field numbers as proc(5) counts them. */
enum {
	SB_STAT_PPID = 4,
	SB_STAT_STARTTIME = 22,
	SB_STAT_RSS = 24,         /* resident pages */
	SB_STAT_ARG_START = 48,
	SB_STAT_ARG_END = 49,
};

/* Fields first..first+count-1 (first >= 4: the numbers after the state)
 * of /proc/<pid>/stat into out; pid 0 reads the caller's own. Returns 0,
 * or -1 when the process is gone or its line has fewer fields. Only open,
 * read and close, no stdio or malloc: a child between fork and exec may
 * call it. */
int sb_proc_stat_fields(pid_t pid, int first, int count, unsigned long long *out);

#endif
