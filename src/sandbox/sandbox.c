#include "sandbox/sandbox.h"

#include <string.h>
#include <unistd.h>

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

void sb_sandbox_close_fds(struct sb_sandbox *sb)
{
	int *fds[] = {&sb->stdin_fd, &sb->stdout_fd, &sb->stderr_fd};
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

const struct sb_backend *sb_backend_select(const struct sb_config *cfg, struct sb_error *err)
{
	switch (cfg->backend) {
	case SB_BACKEND_AUTO:
	case SB_BACKEND_NATIVE:
		return &sb_backend_native;
	case SB_BACKEND_HOST:
		return &sb_backend_host;
	case SB_BACKEND_PODMAN:
		return &sb_backend_podman;
	case SB_BACKEND_DOCKER:
		return &sb_backend_docker;
	}
	sb_fail(err, "backend '%s' is not available in this build", sb_backend_kind_name(cfg->backend));
	sb_hint(err, "use --backend native (the default) or --backend host");
	return NULL;
}
