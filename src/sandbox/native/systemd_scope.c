/* systemd, asked over D-Bus (libsystemd's sd-bus): whether the unit that
 * holds us is delegated, and a transient scope with Delegate=yes to move
 * into when it is not (cgroup_base.c decides when).
 *
 * A normal user's sagebox starts inside whatever unit its parent is in (a
 * desktop app's app-….scope, a terminal's session scope, a user service),
 * none of them delegated: systemd owns their cgroups' controllers. Rootless
 * Podman meets the same on the same desktops by asking the user's systemd
 * manager for a scope per container; sagebox asks for one scope for the
 * whole process (StartTransientUnit with PIDs = ourselves), as root of the
 * system manager and otherwise of the user's own manager: no privilege is
 * gained, and the scope lies in the user's own slice. systemd removes it,
 * with every cgroup below it, once no process is left in it, even after
 * sagebox was killed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/native/native.h"

#ifdef SB_HAVE_LIBSYSTEMD
#include <systemd/sd-bus.h>

#define SYSTEMD_DEST "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER "org.freedesktop.systemd1.Manager"
/* How long systemd may take to start the scope: its job is a move of one
 * process; a manager that does not answer within this is as good as none. */
#define SCOPE_TIMEOUT_US (10 * 1000 * 1000ull)

static int open_bus(bool user_manager, sd_bus **bus, char *why, size_t wn)
{
	int r = user_manager ? sd_bus_open_user(bus) : sd_bus_open_system(bus);
	if (r < 0) {
		*bus = NULL;
		if (user_manager)
			snprintf(why, wn, "your systemd user manager is not reachable (no session bus: %s%s)",
				 strerror(-r),
				 getenv("DBUS_SESSION_BUS_ADDRESS") || getenv("XDG_RUNTIME_DIR")
					 ? ""
					 : "; neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set");
		else
			snprintf(why, wn, "systemd is not reachable (no system bus: %s)", strerror(-r));
		return -1;
	}
	return 0;
}

int nat_systemd_unit_delegated(bool user_manager, const char *unit, char *why, size_t wn)
{
	sd_bus *bus;
	if (open_bus(user_manager, &bus, why, wn) != 0)
		return -1;
	char *path = NULL;
	int val = 0, r = sd_bus_path_encode(SYSTEMD_PATH "/unit", unit, &path);
	if (r >= 0) {
		sd_bus_error e = SD_BUS_ERROR_NULL;
		const char *iface = strstr(unit, ".scope") ? "org.freedesktop.systemd1.Scope"
							   : "org.freedesktop.systemd1.Service";
		r = sd_bus_get_property_trivial(bus, SYSTEMD_DEST, path, iface, "Delegate", &e, 'b', &val);
		if (r < 0)
			snprintf(why, wn, "cannot ask systemd whether %s is delegated: %s", unit,
				 e.message ? e.message : strerror(-r));
		sd_bus_error_free(&e);
	}
	free(path);
	sd_bus_flush_close_unref(bus);
	return r < 0 ? -1 : val ? 1 : 0;
}

struct job_wait {
	const char *job; /* the object path StartTransientUnit returned */
	bool done;
	char result[32];
};

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct job_wait *w = userdata;
	uint32_t id;
	const char *path, *unit, *result;
	if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0 || !w->job || strcmp(path, w->job) != 0)
		return 0;
	w->done = true;
	snprintf(w->result, sizeof w->result, "%s", result);
	return 0;
}

static int start_scope(sd_bus *bus, const char *unit, const char **job, sd_bus_error *e, sd_bus_message **reply)
{
	sd_bus_message *m = NULL;
	int r = sd_bus_message_new_method_call(bus, &m, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER,
					       "StartTransientUnit");
	if (r >= 0)
		r = sd_bus_message_append(m, "ss", unit, "fail");
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "(sv)");
	if (r >= 0)
		r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)", "Description", "s",
					  "sagebox: its sandboxes' memory, processes and CPU limits", "PIDs", "au", 1,
					  (uint32_t)getpid(), "Delegate", "b", 1, "CollectMode", "s",
					  "inactive-or-failed");
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd_bus_message_append(m, "a(sa(sv))", 0);
	if (r >= 0)
		r = sd_bus_call(bus, m, SCOPE_TIMEOUT_US, e, reply);
	if (r >= 0)
		r = sd_bus_message_read(*reply, "o", job);
	sd_bus_message_unref(m);
	return r;
}

int nat_systemd_scope(bool user_manager, char *unit, size_t un, char *why, size_t wn)
{
	sd_bus *bus;
	if (open_bus(user_manager, &bus, why, wn) != 0)
		return -1;
	uint32_t rnd = 0;
	if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != sizeof rnd)
		rnd = (uint32_t)time(NULL);
	snprintf(unit, un, "sagebox-%ld-%08x.scope", (long)getpid(), rnd);

	/* The match first: the job may end before the call returns. */
	struct job_wait w = {0};
	sd_bus_slot *slot = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r = sd_bus_match_signal(bus, &slot, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER, "JobRemoved",
				    on_job_removed, &w);
	if (r >= 0)
		r = start_scope(bus, unit, &w.job, &e, &reply);
	if (r < 0) {
		snprintf(why, wn, "StartTransientUnit %s failed: %s", unit, e.message ? e.message : strerror(-r));
	} else {
		struct timespec t0, now;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			r = sd_bus_process(bus, NULL);
			if (r < 0 || w.done)
				break;
			clock_gettime(CLOCK_MONOTONIC, &now);
			uint64_t spent = (uint64_t)(now.tv_sec - t0.tv_sec) * 1000000ull +
					 (uint64_t)(now.tv_nsec - t0.tv_nsec) / 1000;
			if (spent >= SCOPE_TIMEOUT_US) {
				r = -ETIMEDOUT;
				break;
			}
			if (r == 0 && (r = sd_bus_wait(bus, SCOPE_TIMEOUT_US - spent)) < 0)
				break;
		}
		if (!w.done)
			snprintf(why, wn, "systemd did not start %s: %s", unit, strerror(r < 0 ? -r : ETIMEDOUT));
		else if (strcmp(w.result, "done") != 0)
			snprintf(why, wn, "systemd's job for %s ended \"%s\"", unit, w.result);
		r = w.done && !strcmp(w.result, "done") ? 0 : -1;
	}
	sd_bus_error_free(&e);
	sd_bus_message_unref(reply);
	sd_bus_slot_unref(slot);
	sd_bus_flush_close_unref(bus);
	return r < 0 ? -1 : 0;
}

#else

int nat_systemd_unit_delegated(bool user_manager, const char *unit, char *why, size_t wn)
{
	snprintf(why, wn, "this sagebox was built without libsystemd, so cannot ask systemd whether %s is delegated",
		 unit);
	return -1;
}

int nat_systemd_scope(bool user_manager, char *unit, size_t un, char *why, size_t wn)
{
	snprintf(why, wn, "this sagebox was built without libsystemd (Debian: libsystemd-dev), so cannot ask "
			  "systemd for a scope");
	return -1;
}

#endif
