/* Who owns a container: "<boot id>.<pid>.<start time>" of the sagebox process
 * that started it. A pid alone is not enough (pids are reused, after a
 * reboot every old owner is dead); the start time in clock ticks since boot
 * (/proc/<pid>/stat field 22) makes the pair unique for one boot. */
#include "sandbox/podman/podman.h"
#include "util/procstat.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static char self_owner[96];
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void boot_id(char out[13])
{
	char buf[64] = "";
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (f) {
		if (!fgets(buf, sizeof buf, f))
			buf[0] = '\0';
		fclose(f);
	}
	size_t j = 0;
	for (size_t i = 0; buf[i] && j < 12; i++)
		if ((buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'f'))
			out[j++] = buf[i];
	out[j] = '\0';
	if (j == 0)
		strcpy(out, "noboot");
}

/* The process's start time (field 22 of /proc/<pid>/stat); 0 when it does
 * not exist. */
static unsigned long long start_time(long pid)
{
	unsigned long long t;
	return sb_proc_stat_fields((pid_t)pid, SB_STAT_STARTTIME, 1, &t) ? 0 : t;
}

static void self_init(void)
{
	char boot[13];
	boot_id(boot);
	snprintf(self_owner, sizeof self_owner, "%s.%ld.%llu", boot, (long)getpid(),
		 start_time((long)getpid()));
}

const char *pm_owner_self(void)
{
	pthread_once(&self_once, self_init);
	return self_owner;
}

bool pm_owner_alive(const char *owner)
{
	char boot[13], want_boot[16];
	long pid;
	unsigned long long st;
	boot_id(boot);
	if (!owner || sscanf(owner, "%15[^.].%ld.%llu", want_boot, &pid, &st) != 3)
		return false; /* unreadable: not a sagebox of this boot */
	if (strcmp(boot, want_boot) != 0 || pid <= 0)
		return false; /* started before a reboot */
	return start_time(pid) == st;
}

unsigned pm_container_uid(unsigned uid_top)
{
	unsigned count = PM_UID_COUNT;
	if (uid_top && uid_top < PM_UID_FIRST + count)
		count = uid_top > PM_UID_FIRST ? uid_top - PM_UID_FIRST : 0;
	if (count < PM_UID_MIN_COUNT)
		return 0;
	unsigned r = 0;
	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
		r = (unsigned)rand();
	return PM_UID_FIRST + r % count;
}

void pm_container_name(char *buf, size_t n)
{
	static atomic_uint counter;
	unsigned r = 0;
	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
		r = (unsigned)rand();
	/* Unique per process and call, and unguessable: another local process
	 * of the same user cannot pre-create a container with the name we are
	 * about to use and have us attach code to it. (It would also need to
	 * beat --name's "already in use" refusal, which fails closed.) */
	snprintf(buf, n, PM_NAME_PREFIX "%ld-%u-%08x", (long)getpid(), atomic_fetch_add(&counter, 1) + 1, r);
}
