/* The user's project folder (the project_dir setting) is bound read-write
 * into sessions: a directory whose files the host runs or reads as settings
 * must not be it. */
#ifndef SAGEBOX_CONFIG_PROJECT_DIR_H
#define SAGEBOX_CONFIG_PROJECT_DIR_H

/* Why p (an absolute, resolved path) cannot be the project folder: it is
 * "/", the home directory or holds it, holds the XDG config, data, state or
 * cache directory, or is inside sagebox's own directories. NULL: it can. */
const char *sb_project_dir_refused(const char *p);

#endif
