/* The user's package presets: wheels `sagebox packages add`
 * installed on the host into one user-owned directory, bound read-only at
 * SB_PACKAGES_MOUNT (core/paths.h) in every sandbox, where the driver puts
 * it at the end of sys.path. This file knows where that directory is, what
 * is installed in it and whether sandboxes should see it; the command
 * itself is cli/cli_packages.c. */
#ifndef SAGEBOX_PACKAGES_H
#define SAGEBOX_PACKAGES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* The directory: $XDG_DATA_HOME/sagebox/site-packages when XDG_DATA_HOME is
 * set (absolute), else ~/.local/share/sagebox/site-packages; root without
 * XDG_DATA_HOME gets /var/lib/sagebox/site-packages (a sandbox user cannot
 * read /root). Not created. 0, or -1 with err. */
int sb_packages_dir(char *dir, size_t n, struct sb_error *err);

/* What is installed in dir: [{name, version}] from its *.dist-info
 * directories (METADATA's Name and Version), sorted by name. An absent
 * directory is an empty list. */
json_t *sb_packages_list(const char *dir);

/* Whether sandboxes get dir: true when it is a directory, empty or not,
 * that the sandbox user can read and others cannot write; false with why
 * ("" when it is absent: nothing to say). Bound even when empty, so that
 * what `packages add` puts there later shows in sandboxes already running
 * (a bind shows the directory live). */
bool sb_packages_bindable(const char *dir, char *why, size_t n);

/* Make dir when it is missing (mkdir -p; each directory made here mode
 * 0755 whatever the umask: the sandbox user reads it as "other"). An
 * existing directory is left as it is. 0, or -1 with err. */
int sb_packages_make_dir(const char *dir, struct sb_error *err);

/* At `sagebox mcp`'s start: make the directory when it is missing, so that
 * every sandbox of the server gets it bound (empty) and shows what `packages
 * add` puts there later, without a restart. Says on stderr why not. */
void sb_packages_server_start(void);

/* The line the model reads in the run tools' descriptions and the
 * server's instructions: the packages installed in the directory, when
 * sandboxes get it, by name and version, at most SB_PACKAGES_TEXT_NAMES of
 * them and "(and N more)"; "" when none. Fits in SB_PACKAGES_TEXT_MAX. */
#define SB_PACKAGES_TEXT_NAMES 20
#define SB_PACKAGES_TEXT_MAX 640
void sb_packages_model_text(char out[SB_PACKAGES_TEXT_MAX]);

/* For status: {dir, bound, why?, mount, installed: [...]}; NULL when there
 * is no directory and none could be named. */
json_t *sb_packages_status(void);

/* Remove the package named name (any spelling PEP 503 treats as the same)
 * from dir: the files its RECORD lists, the directories they leave empty,
 * its dist-info. Its dependencies stay. removed gets "NAME VERSION".
 * 0, or -1 with err (no such package: the hint names `packages list`). */
int sb_packages_remove(const char *dir, const char *name, char *removed, size_t rn, struct sb_error *err);

/* Is s a requirement `packages add` accepts: a project name (letters,
 * digits, '.', '_', '-'), optionally [extras] and one version clause
 * (==, >=, <=, ~=, !=, <, > and a version), nothing that pip would read as
 * an option, a path or a URL? */
bool sb_packages_valid_requirement(const char *s);

#endif
