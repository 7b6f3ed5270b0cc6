/* util/procstat: fields of /proc/<pid>/stat by their proc(5) number,
 * counted from the last ')' so that a command name with spaces and
 * parentheses (a process names itself) cannot shift them; a missing
 * process, a field past the line's end, or a field before the numbers is
 * -1, never a wrong number. */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "util/procstat.h"

int main(void)
{
	unsigned long long v[2] = {0, 0};

	CHECK(sb_proc_stat_fields(0, SB_STAT_PPID, 1, v) == 0);
	CHECK(v[0] == (unsigned long long)getppid());
	CHECK(sb_proc_stat_fields(getpid(), SB_STAT_PPID, 1, v) == 0);
	CHECK(v[0] == (unsigned long long)getppid());

	/* A name that looks like the end of the command and more fields. */
	CHECK(prctl(PR_SET_NAME, "x) R 1 2 (y", 0, 0, 0) == 0);
	CHECK(sb_proc_stat_fields(0, SB_STAT_PPID, 1, v) == 0);
	CHECK(v[0] == (unsigned long long)getppid());

	/* arg_start..arg_end spans this process's own command line. */
	CHECK(sb_proc_stat_fields(0, SB_STAT_ARG_START, 2, v) == 0);
	CHECK(v[0] != 0 && v[1] > v[0]);

	/* The start time of a child: after ours, and the same when read twice. */
	unsigned long long mine, a, b;
	CHECK(sb_proc_stat_fields(0, SB_STAT_STARTTIME, 1, &mine) == 0);
	pid_t c = fork();
	if (c == 0) {
		pause();
		_exit(0);
	}
	CHECK(sb_proc_stat_fields(c, SB_STAT_STARTTIME, 1, &a) == 0);
	CHECK(sb_proc_stat_fields(c, SB_STAT_STARTTIME, 1, &b) == 0);
	CHECK(a == b && a >= mine);
	CHECK(sb_proc_stat_fields(c, SB_STAT_PPID, 1, v) == 0 && v[0] == (unsigned long long)getpid());
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	/* Reaped: gone. */
	CHECK(sb_proc_stat_fields(c, SB_STAT_PPID, 1, v) == -1);

	/* Out of range: the state letter, nothing, past the end (52 fields). */
	CHECK(sb_proc_stat_fields(0, 3, 1, v) == -1);
	CHECK(sb_proc_stat_fields(0, SB_STAT_PPID, 0, v) == -1);
	CHECK(sb_proc_stat_fields(0, 60, 1, v) == -1);
	CHECK(sb_proc_stat_fields(0, 52, 2, v) == -1);
	return check_summary();
}
