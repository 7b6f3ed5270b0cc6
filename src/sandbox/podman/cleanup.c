/* No container of ours outlives its run. Each run removes its own
 * container (wait/kill), and the first podman-backed use in a process
 * removes what a dead sagebox left behind: containers with our label whose
 * owner process no longer exists (a sagebox killed with SIGKILL mid-run
 * cannot clean up after itself; its container would keep computing). */
#include "sandbox/podman/podman.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

static bool says_missing(const char *s)
{
	return s && (strcasestr(s, "no such container") || strcasestr(s, "no container with name") ||
		     strcasestr(s, "not known"));
}

static bool exists(const char *exe, enum pm_engine eng, const char *name)
{
	const char *pargv[] = {exe, "--log-level=error", "container", "exists", "--", name, NULL};
	const char *dargv[] = {exe, "container", "inspect", "--format", "{{.Id}}", "--", name, NULL};
	struct pm_out o;
	int rc = pm_run(exe, eng == PM_DOCKER ? dargv : pargv, eng, PM_HELPER_TIMEOUT_MS, &o);
	bool missing = (eng == PM_PODMAN && !o.spawn_errno && !o.timed_out && WIFEXITED(o.status) &&
			WEXITSTATUS(o.status) == 1) ||
		       (eng == PM_DOCKER && rc < 0 && says_missing(o.err));
	pm_out_free(&o);
	return !missing;
}

void pm_kill_container(const char *exe, enum pm_engine eng, const char *name)
{
	const char *pkill[] = {exe, "--log-level=error", "kill", "--signal", "KILL", "--", name, NULL};
	const char *dkill[] = {exe, "kill", "--signal", "KILL", "--", name, NULL};
	struct pm_out o;
	pm_run(exe, eng == PM_DOCKER ? dkill : pkill, eng, PM_HELPER_TIMEOUT_MS, &o);
	pm_out_free(&o);
}

int pm_remove(const char *exe, enum pm_engine eng, const char *name)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		/* --time 0: SIGKILL at once, no grace period the code could use. */
		const char *prm[] = {exe, "--log-level=error", "rm", "-f", "--ignore", "--time", "0", "--", name, NULL};
		const char *drm[] = {exe, "rm", "-f", "--", name, NULL};
		struct pm_out o;
		if (attempt > 0)
			pm_kill_container(exe, eng, name);
		pm_run(exe, eng == PM_DOCKER ? drm : prm, eng, PM_RM_TIMEOUT_MS, &o);
		pm_out_free(&o);
		/* rm may return while another process (conmon's cleanup for
		 * `run --rm`) is still removing it: done only when it is gone. */
		for (int i = 0; i < 30; i++) {
			if (!exists(exe, eng, name))
				return 0;
			usleep(100000);
		}
	}
	return exists(exe, eng, name) ? -1 : 0;
}

int pm_cleanup_orphans(const struct pm_self *pm)
{
	const enum pm_engine eng = pm->eng;
	const char *exe = pm->exe;
	const char *pargv[] = {exe, "--log-level=error", "ps", "-a", "--filter", "label=" PM_LABEL, "--format",
			       "{{.Names}}\t{{index .Labels \"" PM_OWNER_KEY "\"}}", NULL};
	const char *dargv[] = {exe, "ps", "-a", "--filter", "label=" PM_LABEL, "--format",
			       "{{.Names}}\t{{.Label \"" PM_OWNER_KEY "\"}}", NULL};
	struct pm_out o;
	if (pm_run(exe, eng == PM_DOCKER ? dargv : pargv, eng, PM_HELPER_TIMEOUT_MS, &o) < 0) {
		pm_out_free(&o);
		return 0;
	}
	int removed = 0;
	char *save = NULL;
	for (char *line = strtok_r(o.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		const char *name = line, *owner = tab + 1;
		/* Only containers we named, and only when their owner is gone:
		 * a live sagebox's container (another MCP server, a parallel
		 * CLI run) is never touched. */
		if (strncmp(name, PM_NAME_PREFIX, strlen(PM_NAME_PREFIX)) != 0 || pm_owner_alive(owner))
			continue;
		if (pm_remove(exe, eng, name) == 0)
			removed++;
	}
	pm_out_free(&o);
	return removed;
}

static pthread_mutex_t once_lock = PTHREAD_MUTEX_INITIALIZER;
static bool done[2];
static int orphans_removed;

int pm_orphans_removed(void)
{
	pthread_mutex_lock(&once_lock);
	int n = orphans_removed;
	pthread_mutex_unlock(&once_lock);
	return n;
}

int pm_cleanup_orphans_once(const struct pm_self *pm)
{
	const enum pm_engine eng = pm->eng;
	int n = 0;
	pthread_mutex_lock(&once_lock);
	if (!done[eng == PM_DOCKER]) {
		done[eng == PM_DOCKER] = true;
		n = pm_cleanup_orphans(pm);
		orphans_removed += n;
	}
	pthread_mutex_unlock(&once_lock);
	return n;
}
