/* The driver's precompiled code (driver_code.h): finding it, and making it
 * in the background when it is not there. */
#include "runner/warm/driver_code.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner/warm/command.h"
#include "util/clock.h"
#include "util/fd.h"

#define HEAD_MARK "sagebox-driver-code " /* worker/bundle.py CODE_CACHE_MAGIC + " " */
#define BLOB_ID_LEN 32
#define MAKE_LIMIT_MS 60000  /* a Python that compiles longer than this is stuck */
#define STALE_TMP_S 600      /* a half-made file of a sagebox that died meanwhile */
#define ENTRIES 4            /* Pythons one process asks for (one per runner) */

enum state { NOT_MADE, MAKING, READY, FAILED };
static const char *const state_names[] = {"not made", "making", "ready", "failed"};

struct entry {
	char name[160];      /* the file's name (blob and Python stamp) */
	char python[PATH_MAX];
	char dir[PATH_MAX];
	char file[PATH_MAX]; /* dir/name; set once, before state READY */
	bool shared;         /* as root: for the sandbox user too */
	enum state state;
	char why[256];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t made = PTHREAD_COND_INITIALIZER; /* a MAKING entry ended */
static struct entry entries[ENTRIES];
static unsigned n_entries;

extern char **environ;

/* The driver's blob id, from the loader's first line of code-cache header
 * (bundle.py writes it there): "" when the embedded driver has none. */
static const char *blob_id(void)
{
	static char id[BLOB_ID_LEN + 1];
	if (!id[0]) {
		const char *p = strstr(sb_driver_py, "b\"" HEAD_MARK);
		if (p && strspn(p + 2 + strlen(HEAD_MARK), "0123456789abcdef") >= BLOB_ID_LEN)
			memcpy(id, p + 2 + strlen(HEAD_MARK), BLOB_ID_LEN);
	}
	return id;
}

#define ROOT_CACHE "/var/cache/sagebox"
#define ROOT_CACHE_DIR ROOT_CACHE "/driver-code"

/* $XDG_CACHE_HOME/sagebox/driver-code, ~/.cache/..., or as root
 * ROOT_CACHE_DIR. Started as root, the native sandbox's
 * user is another (nobody): it must be able to reach the file (*shared:
 * the directories we make are 0755), and root's home is closed to it.
 * -1 when there is none. */
static int cache_dir(char *out, size_t n, bool *shared)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int r;
	*shared = geteuid() == 0;
	if (xdg && xdg[0] == '/')
		r = snprintf(out, n, "%s/sagebox/driver-code", xdg);
	else if (geteuid() == 0)
		r = snprintf(out, n, ROOT_CACHE_DIR);
	else if (home && home[0] == '/')
		r = snprintf(out, n, "%s/.cache/sagebox/driver-code", home);
	else
		return -1;
	return r < 0 || (size_t)r >= n ? -1 : 0;
}

/* The file's name for python as it is now; -1 when it cannot be stat'ed. */
static int name_for(const char *python, char *out, size_t n)
{
	struct stat st;
	if (!blob_id()[0] || stat(python, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	int r = snprintf(out, n, "driver-%s-%llx-%llx-%llx-%llx.%09ld.code", blob_id(),
			 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
			 (unsigned long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	return r < 0 || (size_t)r >= n ? -1 : 0;
}

static struct entry *find(const char *name)
{
	for (unsigned i = 0; i < n_entries; i++)
		if (!strcmp(entries[i].name, name))
			return &entries[i];
	return NULL;
}

/* mkdir -p below the cache's root (each made with mode). */
static int make_dirs(const char *dir, mode_t mode)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s", dir);
	for (char *s = strchr(tmp + 1, '/');; s = strchr(s + 1, '/')) {
		if (s)
			*s = '\0';
		if (mkdir(tmp, mode) != 0 && errno != EEXIST)
			return -1;
		if (!s)
			return 0;
		*s = '/';
	}
}

/* Whether fd holds a code cache of this driver (its header). */
static bool has_header(int fd)
{
	char head[sizeof HEAD_MARK + BLOB_ID_LEN];
	ssize_t r = pread(fd, head, sizeof head - 1, 0);
	return r == (ssize_t)sizeof head - 1 && !memcmp(head, HEAD_MARK, strlen(HEAD_MARK)) &&
	       !memcmp(head + strlen(HEAD_MARK), blob_id(), BLOB_ID_LEN);
}

/* Remove the other driver-*.code files (another build's, an old Python's)
 * and half-made ones left by a sagebox that died while making one. */
static void prune(const char *dir, const char *keep)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	time_t now = time(NULL);
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		bool code = !strncmp(e->d_name, "driver-", 7) && strstr(e->d_name, ".code") && strcmp(e->d_name, keep);
		bool tmp = !strncmp(e->d_name, ".tmp-", 5) && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			   now - st.st_mtime > STALE_TMP_S;
		if (code || tmp)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* Run `python -I -c <driver> code-cache DIR NAME` at the lowest CPU
 * priority (it runs beside the first sandboxes' start); the Python writes
 * the file and renames it into place itself (whole or not at all). It dies
 * with this thread (PR_SET_PDEATHSIG: the thread waits for it), so nothing
 * is left running when sagebox is killed: a `python` setting pointing at
 * something that never exits is killed after MAKE_LIMIT_MS, or with us.
 * 0, or -1 with why. */
static int compile_into(const struct entry *e, char *why, size_t wn)
{
	const char *argv[] = {e->python, "-I", "-c", sb_driver_py, "code-cache", e->dir, e->name, NULL};
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		return snprintf(why, wn, "cannot open /dev/null: %s", strerror(errno)), -1;
	pid_t parent = getpid();
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid_t pid = fork();
	if (pid == 0) {
		/* A fork of a threaded process: async-signal-safe calls only. */
		for (int sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				signal(sig, SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(127);
		setpriority(PRIO_PROCESS, 0, 19);
		if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(127);
		/* Stops: descriptors other threads opened without O_CLOEXEC (a
		 * job's pipes, the MCP socket) leaking into the compiler. */
		syscall(SYS_close_range, 3, ~0U, 0);
		execve(e->python, (char *const *)argv, environ);
		_exit(127);
	}
	int fork_errno = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(null);
	if (pid < 0)
		return snprintf(why, wn, "cannot fork: %s", strerror(fork_errno)), -1;
	uint64_t end = sb_now_ms() + MAKE_LIMIT_MS;
	int st = 0;
	pid_t w;
	while ((w = waitpid(pid, &st, WNOHANG)) == 0 && sb_now_ms() < end)
		usleep(10 * 1000);
	if (w == 0) {
		kill(pid, SIGKILL);
		(void)SB_RETRY_EINTR(waitpid(pid, &st, 0));
		return snprintf(why, wn, "%.200s did not compile the driver within %d s", e->python, MAKE_LIMIT_MS / 1000),
		       -1;
	}
	if (w < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return snprintf(why, wn, "%.200s -I -c <driver> code-cache failed (status %d)", e->python, st), -1;
	int fd = open(e->file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	bool ok = fd >= 0 && has_header(fd);
	if (fd >= 0)
		close(fd);
	if (!ok)
		return snprintf(why, wn, "%.200s wrote no driver code", e->python), -1;
	return 0;
}

static void *make_main(void *arg)
{
	struct entry *e = arg;
	char why[256] = "";
	if (make_dirs(e->dir, e->shared ? 0755 : 0700) != 0) {
		snprintf(why, sizeof why, "cannot make %.200s: %s", e->dir, strerror(errno));
	} else {
		/* Whatever the umask, the sandbox user enters: the default's
		 * /var/cache/sagebox too, never an XDG_CACHE_HOME's sagebox/,
		 * which holds our other caches. */
		if (e->shared)
			chmod(e->dir, 0755);
		if (e->shared && !strcmp(e->dir, ROOT_CACHE_DIR))
			chmod(ROOT_CACHE, 0755);
		if (compile_into(e, why, sizeof why) == 0)
			prune(e->dir, e->name);
	}
	pthread_mutex_lock(&mu);
	e->state = why[0] ? FAILED : READY;
	snprintf(e->why, sizeof e->why, "%s", why);
	pthread_cond_broadcast(&made);
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* The entry for python now (under mu); NULL when there can be none. */
static struct entry *entry_for(const char *python)
{
	char name[160], dir[PATH_MAX];
	bool shared;
	if (!python || python[0] != '/' || name_for(python, name, sizeof name) != 0 ||
	    cache_dir(dir, sizeof dir, &shared) != 0)
		return NULL;
	struct entry *e = find(name);
	if (e)
		return e;
	if (n_entries == ENTRIES)
		return NULL;
	e = &entries[n_entries];
	snprintf(e->name, sizeof e->name, "%s", name);
	snprintf(e->python, sizeof e->python, "%s", python);
	snprintf(e->dir, sizeof e->dir, "%s", dir);
	e->shared = shared;
	if (snprintf(e->file, sizeof e->file, "%s/%s", dir, name) >= (int)sizeof e->file)
		return NULL;
	n_entries++;
	e->state = NOT_MADE;
	int fd = open(e->file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		if (has_header(fd))
			e->state = READY;
		close(fd);
	}
	return e;
}

const char *sb_driver_code_for(const char *python)
{
	pthread_mutex_lock(&mu);
	struct entry *e = entry_for(python);
	const char *file = e && e->state == READY ? e->file : NULL;
	if (e && e->state == NOT_MADE) {
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		e->state = pthread_create(&t, &a, make_main, e) == 0 ? MAKING : FAILED;
		if (e->state == FAILED)
			snprintf(e->why, sizeof e->why, "cannot start a thread");
		pthread_attr_destroy(&a);
	}
	pthread_mutex_unlock(&mu);
	return file;
}

json_t *sb_driver_code_status(const char *python)
{
	pthread_mutex_lock(&mu);
	struct entry *e = entry_for(python);
	json_t *o = e ? json_pack("{s:s, s:s}", "state", state_names[e->state], "file", e->file)
		      : json_pack("{s:s, s:s}", "state", "not made", "why",
				  "no cache directory (HOME or XDG_CACHE_HOME), or the python cannot be found");
	if (e && e->why[0])
		json_object_set_new(o, "why", json_string(e->why));
	pthread_mutex_unlock(&mu);
	return o;
}

void sb_driver_code_settle(unsigned ms)
{
	uint64_t end = sb_now_ms() + ms;
	pthread_mutex_lock(&mu);
	for (;;) {
		bool making = false;
		for (unsigned i = 0; i < n_entries; i++)
			making |= entries[i].state == MAKING;
		uint64_t now = sb_now_ms();
		if (!making || now >= end)
			break;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + (end - now) * 1000000u;
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		pthread_cond_timedwait(&made, &mu, &ts);
	}
	pthread_mutex_unlock(&mu);
}
