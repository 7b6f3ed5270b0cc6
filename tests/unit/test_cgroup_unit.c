/* sandbox/native/cgroup_base: the systemd unit that holds a cgroup, and
 * whose manager it is, read from the cgroup's path. Whether sagebox may
 * manage the cgroups below depends on that unit being delegated, so the
 * unit must be the deepest one (a scope inside a user's manager, not
 * user@UID.service around it), and a user@UID.service itself is the system
 * manager's unit. */
#include <string.h>

#include "check.h"
#include "sandbox/native/native.h"

static const char *unit(const char *path, bool *user_manager, size_t *end)
{
	static char out[256];
	const char *name;
	size_t len;
	if (!nat_cgroup_unit_of(path, &name, &len, end, user_manager))
		return "";
	memcpy(out, name, len);
	out[len] = '\0';
	return out;
}

int main(void)
{
	bool user;
	size_t end;
	const char *p = "/user.slice/user-1000.slice/user@1000.service/app.slice/run-u2.service/sagebox-server";
	CHECK(!strcmp(unit(p, &user, &end), "run-u2.service") && user);
	CHECK(end == strlen("/user.slice/user-1000.slice/user@1000.service/app.slice/run-u2.service"));

	p = "/user.slice/user-1000.slice/session-3.scope";
	CHECK(!strcmp(unit(p, &user, &end), "session-3.scope") && !user && end == strlen(p));

	p = "/user.slice/user-1000.slice/user@1000.service/init.scope";
	CHECK(!strcmp(unit(p, &user, &end), "init.scope") && user);

	p = "/user.slice/user-1000.slice/user@1000.service";
	CHECK(!strcmp(unit(p, &user, &end), "user@1000.service") && !user);

	p = "/system.slice/sagebox.service/sagebox-server";
	CHECK(!strcmp(unit(p, &user, &end), "sagebox.service") && !user);
	CHECK(end == strlen("/system.slice/sagebox.service"));

	/* A scope inside a delegated service is the deepest unit-like name. */
	p = "/user.slice/user-1000.slice/user@1000.service/app.slice/app-x.scope/sagebox-7-abc.scope/sagebox-server";
	CHECK(!strcmp(unit(p, &user, &end), "sagebox-7-abc.scope") && user);

	/* No unit: the root, a slice, a container's cgroup namespace. */
	CHECK(!*unit("/", &user, &end));
	CHECK(!*unit("", &user, &end));
	CHECK(!*unit("/user.slice/user-1000.slice", &user, &end));
	CHECK(!*unit("/.service", &user, &end) && !*unit("/a/.scope", &user, &end));
	return check_summary();
}
