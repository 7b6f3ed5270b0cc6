#include "sandbox/sandbox.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics/metrics.h"
#include "sandbox/user_resources.h"
#include "util/fd.h"

const char *const *sb_sandbox_env(void)
{
	/* An allow-list, as in the seed: home and Sage's state dir on the
	 * sandbox's tmpfs, one thread per math library, no user site-packages. */
	static const char *const env[] = {
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=/tmp/home",
		"DOT_SAGE=/tmp/dot-sage",
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"TERM=dumb",
		"TMPDIR=/tmp",
		"SAGE_NUM_THREADS=1",
		"OPENBLAS_NUM_THREADS=1",
		"OMP_NUM_THREADS=1",
		"MKL_NUM_THREADS=1",
		"PYTHONNOUSERSITE=1",
		"PYTHONDONTWRITEBYTECODE=1",
		"PYTHONUNBUFFERED=1",
		"MPLBACKEND=Agg",
		NULL,
	};
	return env;
}

const char *const *sb_sandbox_proxy_env(void)
{
#define STR_(x) #x
#define STR(x) STR_(x)
#define SB_PROXY_URL "http://127.0.0.1:" STR(SB_NET_PORT)
	static const char *const env[] = {
		"HTTP_PROXY=" SB_PROXY_URL,  "HTTPS_PROXY=" SB_PROXY_URL, "ALL_PROXY=" SB_PROXY_URL,
		"http_proxy=" SB_PROXY_URL,  "https_proxy=" SB_PROXY_URL, "all_proxy=" SB_PROXY_URL,
		"NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1",
		"SAGEBOX_NET_SOCKET=" SB_NET_SOCKET, NULL,
	};
	return env;
}

void sb_sandbox_close_fds(struct sb_sandbox *sb)
{
	int *fds[] = {&sb->stdin_fd, &sb->stdout_fd, &sb->stderr_fd};
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		sb_close(fds[i]);
}

struct sb_backend *sb_backend_open_type(const struct sb_backend_type *t, const struct sb_backend_settings *s,
					struct sb_error *err)
{
	struct sb_backend *be = calloc(1, sizeof *be);
	if (!be) {
		sb_fail(err, "out of memory");
		return NULL;
	}
	be->type = t;
	be->max_sandboxes = s->max_sandboxes;
	be->self = t->ops->open(s, err);
	if (!be->self) {
		free(be);
		return NULL;
	}
	return be;
}

void sb_backend_close(struct sb_backend *be)
{
	if (!be)
		return;
	be->type->ops->close(be->self);
	free(be);
}

json_t *sb_backend_status(const struct sb_backend *be)
{
	static const struct {
		enum sb_backend_cap cap;
		const char *name;
	} caps[] = {
		{SB_CAP_ISOLATED, "isolated"},
		{SB_CAP_OWN_PIDNS, "own_pid_namespace"},
		{SB_CAP_POLICY, "syscall_policy"},
		{SB_CAP_IMAGES, "container_images"},
		{SB_CAP_HOST_FILES, "host_programs"},
	};
	json_t *o = be->type->ops->status(be->self);
	json_t *list = json_array();
	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
		if (be->type->caps & caps[i].cap)
			json_array_append_new(list, json_string(caps[i].name));
	json_object_set_new(o, "capabilities", list);
	if (be->type->caps & SB_CAP_ISOLATED) {
		/* What one sandbox may hold of what is counted per host user,
		 * and what all of them at once would take of this host's limit. */
		json_t *ur = sb_user_resources_json(be->max_sandboxes);
		json_object_set_new(ur, "sandboxes_at_once", json_integer(be->max_sandboxes));
		json_object_set_new(o, "per_user_resources", ur);
	}
	return o;
}

int sb_backend_spawn(const struct sb_backend *be, const struct sb_sandbox_req *req, struct sb_sandbox *sb,
		     struct sb_error *err)
{
	sb->backend = be;
	int rc = be->type->ops->spawn(be->self, req, sb, err);
	if (rc < 0)
		sb_metric_add(SB_M_SANDBOX_START_FAILURES, 1, (const char *[]){be->type->name});
	return rc;
}

void sb_backend_kill(struct sb_sandbox *sb)
{
	sb->backend->type->ops->kill(sb);
}

int sb_backend_wait(struct sb_sandbox *sb, struct sb_exit *ex, struct sb_error *err)
{
	return sb->backend->type->ops->wait(sb, ex, err);
}

long sb_backend_oom_kills(const struct sb_sandbox *sb)
{
	const struct sb_backend_ops *ops = sb->backend ? sb->backend->type->ops : NULL;
	return ops && ops->oom_kills ? ops->oom_kills(sb) : -1;
}
