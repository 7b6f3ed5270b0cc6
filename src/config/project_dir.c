/* Where a project folder (project_dir) may not be: see project_dir.h. */
#include "config/project_dir.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether p (resolved) is dir or holds it. */
static bool holds(const char *p, const char *dir)
{
	char real[PATH_MAX];
	if (!dir || dir[0] != '/')
		return false;
	if (!realpath(dir, real))
		snprintf(real, sizeof real, "%s", dir);
	size_t n = strlen(p);
	return !strcmp(p, "/") || (!strncmp(real, p, n) && (real[n] == '\0' || real[n] == '/'));
}

/* Why a project folder must not be p: the code could rewrite what the
 * host runs or reads as settings (a shell's dotfiles, sagebox's own
 * config, data and state, other programs' config). */
const char *sb_project_dir_refused(const char *p)
{
	const char *home = getenv("HOME");
	char d[5][PATH_MAX] = {"", "", "", "", ""};
	static const struct {
		const char *var, *fallback;
	} xdg[] = {{"XDG_CONFIG_HOME", ".config"}, {"XDG_DATA_HOME", ".local/share"}, {"XDG_STATE_HOME", ".local/state"},
		   {"XDG_CACHE_HOME", ".cache"}};
	if (!strcmp(p, "/"))
		return "is the root directory";
	if (home && holds(p, home))
		return "is the home directory or holds it (the code could rewrite its dotfiles)";
	for (size_t i = 0; i < 4; i++) {
		const char *v = getenv(xdg[i].var);
		if (v && v[0] == '/')
			snprintf(d[i], PATH_MAX, "%s", v);
		else if (home && home[0] == '/')
			snprintf(d[i], PATH_MAX, "%s/%s", home, xdg[i].fallback);
		if (holds(p, d[i]))
			return "holds the settings, data or state of your programs (the code could rewrite them)";
		char mine[PATH_MAX + 16];
		snprintf(mine, sizeof mine, "%.4000s/sagebox", d[i]);
		if (d[i][0] && holds(mine, p))
			return "is inside sagebox's own directories";
	}
	snprintf(d[4], PATH_MAX, "/var/lib/sagebox");
	if (holds(p, d[4]) || holds(d[4], p))
		return "is, holds or is inside sagebox's own directory /var/lib/sagebox";
	return NULL;
}
