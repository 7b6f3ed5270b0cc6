#include "runner/backend.h"

#include <string.h>

#include "packages/packages.h"
#include "sandbox/registry.h"
#include "sandbox/sandbox.h"

void sb_runner_backend_settings(const struct sb_config *cfg, struct sb_backend_settings *s)
{
	memset(s, 0, sizeof *s);
	s->limits = cfg->limits;
	s->sandbox_user = cfg->sandbox_user;
	s->engine = cfg->podman;
	s->image = cfg->image;
	s->container_user = cfg->container_user;
	s->shares = (const char (*)[PATH_MAX])cfg->shares;
	s->n_shares = cfg->n_shares;
	/* Only a directory, empty or not, that the sandbox user can read and
	 * others cannot write: otherwise sandboxes are as they were without
	 * it. Empty too: what `packages add` puts there later shows live. */
	char why[PATH_MAX + 128];
	if (sb_packages_dir(s->packages, sizeof s->packages, NULL) != 0 ||
	    !sb_packages_bindable(s->packages, why, sizeof why))
		s->packages[0] = '\0';
	/* The runner's policy: idle warm workers of both kinds, every job
	 * slot, and one client's sessions (fewer when the total of all
	 * clients is lower) with a spare per language. */
	unsigned sessions = cfg->max_sessions < cfg->max_sessions_total ? cfg->max_sessions : cfg->max_sessions_total;
	s->max_sandboxes = cfg->pool_size * 2 + cfg->max_concurrent + sessions + 3;
	s->commands[0].name = "sage", s->commands[0].path = cfg->sage;
	s->commands[1].name = "python", s->commands[1].path = cfg->python;
	s->commands[2].name = "shell", s->commands[2].path = cfg->shell;
}

struct sb_backend *sb_runner_backend_open(const struct sb_config *cfg, struct sb_error *err)
{
	struct sb_backend_settings s;
	sb_runner_backend_settings(cfg, &s);
	return sb_backend_open(cfg->backend, &s, err);
}
