/* The backends built into sagebox: one row each, with what it can do.
 * Config takes its allowed values from here, the runner and status ask the
 * capabilities, nobody compares backend names. */
#include "sandbox/registry.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "sandbox/backends.h"

static const struct sb_backend_type registry[] = {
	{"native", "Linux namespaces, seccomp, Landlock, cgroups or rlimits",
	 SB_CAP_ISOLATED | SB_CAP_OWN_PIDNS | SB_CAP_POLICY | SB_CAP_HOST_FILES | SB_CAP_PROJECT, &sb_native_ops},
	{"podman", "rootless Podman container",
	 SB_CAP_ISOLATED | SB_CAP_OWN_PIDNS | SB_CAP_POLICY | SB_CAP_IMAGES | SB_CAP_PROJECT, &sb_podman_ops},
	{"docker", "rootless Docker (or podman's Docker API) container",
	 SB_CAP_ISOLATED | SB_CAP_OWN_PIDNS | SB_CAP_POLICY | SB_CAP_IMAGES, &sb_docker_ops},
	{"host", "NO isolation: the code runs as you, on this machine", SB_CAP_HOST_FILES, &sb_host_ops},
};
#define N_BACKENDS (sizeof registry / sizeof registry[0])

const struct sb_backend_type *sb_backend_types(size_t *n)
{
	*n = N_BACKENDS;
	return registry;
}

const struct sb_backend_type *sb_backend_type_find(const char *name)
{
	/* auto: the first row, the one that needs nothing but the kernel. */
	if (!strcmp(name, SB_BACKEND_AUTO))
		return &registry[0];
	for (size_t i = 0; i < N_BACKENDS; i++)
		if (!strcmp(name, registry[i].name))
			return &registry[i];
	return NULL;
}

const struct sb_backend_type *sb_backend_type_unisolated(void)
{
	for (size_t i = 0; i < N_BACKENDS; i++)
		if (!(registry[i].caps & SB_CAP_ISOLATED))
			return &registry[i];
	return NULL;
}

static char names[128];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void join_names(void)
{
	size_t off = (size_t)snprintf(names, sizeof names, "%s", SB_BACKEND_AUTO);
	for (size_t i = 0; i < N_BACKENDS && off < sizeof names; i++)
		off += (size_t)snprintf(names + off, sizeof names - off, "|%s", registry[i].name);
}

const char *sb_backend_names(void)
{
	pthread_once(&names_once, join_names);
	return names;
}

struct sb_backend *sb_backend_open(const char *name, const struct sb_backend_settings *s, struct sb_error *err)
{
	const struct sb_backend_type *t = sb_backend_type_find(name);
	if (!t) {
		sb_fail(err, "backend '%s' is not available in this build", name);
		sb_hint(err, "use one of %s", sb_backend_names());
		return NULL;
	}
	return sb_backend_open_type(t, s, err);
}
