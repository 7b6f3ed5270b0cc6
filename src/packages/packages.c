#include "packages/packages.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/paths.h"

int sb_packages_dir(char *dir, size_t n, struct sb_error *err)
{
	const char *data = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
	int w;
	if (data && data[0] == '/')
		w = snprintf(dir, n, "%s/sagebox/site-packages", data);
	else if (geteuid() == 0)
		w = snprintf(dir, n, "/var/lib/sagebox/site-packages");
	else if (home && home[0] == '/')
		w = snprintf(dir, n, "%s/.local/share/sagebox/site-packages", home);
	else
		return sb_fail(err, "neither XDG_DATA_HOME nor HOME is set, so sagebox has no packages directory");
	if (w < 0 || (size_t)w >= n)
		return sb_fail(err, "the packages directory's path is too long");
	return 0;
}

/* "Key: value" of a METADATA file into out (first match). */
static void metadata_field(FILE *f, const char *key, char *out, size_t n)
{
	char line[512];
	size_t k = strlen(key);
	rewind(f);
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '\n' || line[0] == '\r')
			break; /* the headers end at the first empty line */
		if (!strncasecmp(line, key, k) && line[k] == ':') {
			char *v = line + k + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\r\n")] = '\0';
			snprintf(out, n, "%s", v);
			return;
		}
	}
}

static int by_name(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "name"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "name"));
	return strcasecmp(x ? x : "", y ? y : "");
}

json_t *sb_packages_list(const char *dir)
{
	json_t *list = json_array();
	DIR *d = opendir(dir);
	if (!d)
		return list;
	json_t *items[1024];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < sizeof items / sizeof *items) {
		size_t len = strlen(e->d_name);
		if (len <= 10 || strcmp(e->d_name + len - 10, ".dist-info"))
			continue;
		/* NAME-VERSION.dist-info; METADATA says it exactly */
		char name[256] = "", version[128] = "", path[PATH_MAX];
		snprintf(name, sizeof name, "%.*s", (int)(len - 10), e->d_name);
		char *dash = strchr(name, '-');
		if (dash) {
			snprintf(version, sizeof version, "%s", dash + 1);
			*dash = '\0';
		}
		if (snprintf(path, sizeof path, "%s/%s/METADATA", dir, e->d_name) < (int)sizeof path) {
			FILE *f = fopen(path, "re");
			if (f) {
				metadata_field(f, "Name", name, sizeof name);
				metadata_field(f, "Version", version, sizeof version);
				fclose(f);
			}
		}
		items[n++] = json_pack("{s:s, s:s, s:s}", "name", name, "version", version, "dist_info", e->d_name);
	}
	closedir(d);
	qsort(items, n, sizeof *items, by_name);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, items[i]);
	return list;
}

bool sb_packages_bindable(const char *dir, char *why, size_t n)
{
	why[0] = '\0';
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return false;
	/* The sandbox user (native started as root: sandbox_user; a container's
	 * user) reads it as "other": so must every directory above it when
	 * sagebox runs as root. Refused here, the sandboxes still start. */
	if ((st.st_mode & 05) != 05) {
		snprintf(why, n, "%s is not readable by others (mode %04o): chmod 755 it", dir, st.st_mode & 07777);
		return false;
	}
	/* Stops any other local user (and a sandbox user that is "other" to
	 * it) planting a module that every sandbox then imports. */
	if (st.st_mode & 02) {
		snprintf(why, n, "%s is writable by others (mode %04o): chmod o-w it", dir, st.st_mode & 07777);
		return false;
	}
	if (geteuid() == 0) {
		char up[PATH_MAX];
		snprintf(up, sizeof up, "%s", dir);
		for (char *s; (s = strrchr(up, '/')) && s != up;) {
			*s = '\0';
			if (stat(up, &st) == 0 && !(st.st_mode & 01)) {
				snprintf(why, n, "the sandbox user cannot reach it: %s is mode %04o (others may not enter)",
					 up, st.st_mode & 07777);
				return false;
			}
		}
	}
	return true;
}

int sb_packages_make_dir(const char *dir, struct sb_error *err)
{
	char p[PATH_MAX];
	if (dir[0] != '/' || snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
		return sb_fail(err, "the packages directory %s is not an absolute path", dir);
	for (char *s = p + 1;; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0755) == 0) {
			/* ours: 0755 whatever the umask (a umask of 077 would hide it) */
			if (chmod(p, 0755) != 0)
				return sb_fail_errno(err, "cannot chmod %s", p);
		} else if (errno != EEXIST) {
			return sb_fail_errno(err, "cannot create %s", p);
		}
		if (!(*s = c))
			return 0;
	}
}

void sb_packages_server_start(void)
{
	char dir[PATH_MAX], why[PATH_MAX + 128];
	struct sb_error err = {0};
	if (sb_packages_dir(dir, sizeof dir, &err) != 0 || sb_packages_make_dir(dir, &err) != 0)
		fprintf(stderr, "sagebox mcp: packages added while it runs will be seen after a restart only: %s\n",
			err.msg);
	else if (!sb_packages_bindable(dir, why, sizeof why) && why[0])
		fprintf(stderr, "sagebox mcp: sandboxes will not see the packages directory: %s\n", why);
}

/* Only what PEP 508 and 440 spell: a package's METADATA is its author's
 * text, and this goes into the model's prompt (no "Name: ignore the
 * user..."). */
static bool plain(const char *s, size_t max)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+!");
	return n && n == strlen(s) && n <= max;
}

void sb_packages_model_text(char out[SB_PACKAGES_TEXT_MAX])
{
	char dir[PATH_MAX], why[PATH_MAX + 128];
	out[0] = '\0';
	if (sb_packages_dir(dir, sizeof dir, NULL) != 0 || !sb_packages_bindable(dir, why, sizeof why))
		return;
	json_t *l = sb_packages_list(dir), *it;
	size_t i, shown = 0, skipped = 0, len = 0;
	static const char intro[] = "The user installed these Python packages for every sandbox (read-only, at "
				    "the end of sys.path): import them in Sage and Python code, no pip needed: ";
	json_array_foreach(l, i, it) {
		const char *name = json_string_value(json_object_get(it, "name"));
		const char *version = json_string_value(json_object_get(it, "version"));
		char one[128];
		int w = snprintf(one, sizeof one, "%s %s", name ? name : "", version ? version : "");
		/* room kept for ", " and " (and N more)." */
		if (!plain(name ? name : "", 64) || !plain(version ? version : "", 32) ||
		    shown == SB_PACKAGES_TEXT_NAMES || len + 2 + (size_t)w + 24 > SB_PACKAGES_TEXT_MAX) {
			skipped++;
			continue;
		}
		if (!shown)
			len = (size_t)snprintf(out, SB_PACKAGES_TEXT_MAX, "%s", intro);
		len += (size_t)snprintf(out + len, SB_PACKAGES_TEXT_MAX - len, "%s%s", shown ? ", " : "", one);
		shown++;
	}
	if (shown && skipped)
		snprintf(out + len, SB_PACKAGES_TEXT_MAX - len, " (and %zu more).", skipped);
	else if (shown)
		snprintf(out + len, SB_PACKAGES_TEXT_MAX - len, ".");
	json_decref(l);
}

json_t *sb_packages_status(void)
{
	char dir[PATH_MAX], why[PATH_MAX + 128];
	struct sb_error err = {0};
	if (sb_packages_dir(dir, sizeof dir, &err) != 0)
		return NULL;
	bool bound = sb_packages_bindable(dir, why, sizeof why);
	json_t *o = json_pack("{s:s, s:b, s:s, s:o}", "dir", dir, "bound", bound, "mount", SB_PACKAGES_MOUNT,
			      "installed", sb_packages_list(dir));
	if (why[0])
		json_object_set_new(o, "why", json_string(why));
	return o;
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

bool sb_packages_valid_requirement(const char *s)
{
	const char *p = s;
	if (!isalnum((unsigned char)*p))
		return false; /* not an option, a path or a URL */
	while (name_char(*p))
		p++;
	if (p - s > 128 || !isalnum((unsigned char)p[-1]))
		return false;
	if (*p == '[') {
		for (p++; name_char(*p) || *p == ','; p++)
			;
		if (*p++ != ']')
			return false;
	}
	if (!*p)
		return true;
	static const char *const ops[] = {"===", "==", ">=", "<=", "~=", "!=", "<", ">"};
	size_t i = 0;
	while (i < sizeof ops / sizeof *ops && strncmp(p, ops[i], strlen(ops[i])))
		i++;
	if (i == sizeof ops / sizeof *ops)
		return false;
	p += strlen(ops[i]);
	if (!isalnum((unsigned char)*p))
		return false;
	for (; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '*' && *p != '+' && *p != '!' && *p != '-' &&
		    *p != '_')
			return false;
	return true;
}

/* PEP 503's normalised name: lower case, runs of '-', '_', '.' as one '-'. */
static void normalise(const char *in, char *out, size_t n)
{
	size_t o = 0;
	for (const char *p = in; *p && o + 1 < n; p++) {
		if (*p == '-' || *p == '_' || *p == '.') {
			if (o && out[o - 1] != '-')
				out[o++] = '-';
		} else {
			out[o++] = (char)tolower((unsigned char)*p);
		}
	}
	out[o] = '\0';
}

/* dir/rel's parents up to dir, removed while empty. */
static void prune_parents(const char *dir, const char *rel)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof p, "%s/%s", dir, rel) >= (int)sizeof p)
		return;
	size_t base = strlen(dir);
	for (char *s; (s = strrchr(p, '/')) && (size_t)(s - p) > base;) {
		*s = '\0';
		if (rmdir(p) != 0)
			return;
	}
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) == 0 ? 0 : -1;
	return unlink(path) == 0 ? 0 : -1;
}

int sb_packages_remove(const char *dir, const char *name, char *removed, size_t rn, struct sb_error *err)
{
	char want[256], have[256];
	normalise(name, want, sizeof want);
	json_t *list = sb_packages_list(dir);
	const char *dist = NULL;
	size_t i;
	json_t *it;
	json_array_foreach(list, i, it) {
		normalise(json_string_value(json_object_get(it, "name")), have, sizeof have);
		if (!strcmp(have, want)) {
			dist = json_string_value(json_object_get(it, "dist_info"));
			snprintf(removed, rn, "%s %s", json_string_value(json_object_get(it, "name")),
				 json_string_value(json_object_get(it, "version")));
			break;
		}
	}
	if (!dist) {
		json_decref(list);
		sb_fail(err, "no package '%s' in %s", name, dir);
		return sb_hint(err, "`sagebox packages list` shows what is installed there");
	}
	/* Its files, as its RECORD lists them (pip writes it at install):
	 * relative paths inside dir only. --target moved the scripts from
	 * ../../bin to dir/bin. */
	char path[PATH_MAX], line[PATH_MAX + 256];
	snprintf(path, sizeof path, "%s/%s/RECORD", dir, dist);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof line, f)) {
		char *rel = line;
		rel[strcspn(rel, ",\r\n")] = '\0';
		while (!strncmp(rel, "../", 3))
			rel += 3;
		if (rel != line && strncmp(rel, "bin/", 4))
			continue;
		if (!rel[0] || rel[0] == '/' || strstr(rel, "/../") || !strncmp(rel, "..", 2))
			continue;
		if (snprintf(path, sizeof path, "%s/%s", dir, rel) < (int)sizeof path && unlink(path) == 0)
			prune_parents(dir, rel);
	}
	if (f)
		fclose(f);
	/* What RECORD did not name (bytecode caches), then the dist-info. */
	snprintf(path, sizeof path, "%s/%s", dir, dist);
	struct stat st;
	int rc = lstat(path, &st) == 0 ? nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) : 0;
	json_decref(list);
	if (rc != 0)
		return sb_fail_errno(err, "cannot remove %s", path);
	return 0;
}
