#include "runner/sage/locate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/backend.h"
#include "runner/sage/locate_ask.h"
#include "runner/sage/locate_cache.h"
#include "sandbox/registry.h"

/* What the asked interpreter prints: one marked line of JSON. Importing
 * sage.version is cheap (no sage.all); a Python without Sage says null. */
#define MARK "SAGEBOX-FOUND "
static const char SNIPPET[] =
	"import sys, json\n"
	"v = None\n"
	"try:\n"
	"    import sage.version\n"
	"    v = sage.version.version\n"
	"except Exception:\n"
	"    pass\n"
	"print('\\n" MARK "' + json.dumps({'executable': sys.executable, 'prefix': sys.prefix,"
	" 'base_prefix': sys.base_prefix, 'version': v}))\n";
static void take(struct sb_sage_found *f, const json_t *j)
{
	const char *v = json_string_value(json_object_get(j, "version"));
	snprintf(f->python, sizeof f->python, "%s", json_string_value(json_object_get(j, "executable")));
	snprintf(f->version, sizeof f->version, "%s", v ? v : "");
	v = json_string_value(json_object_get(j, "prefix"));
	snprintf(f->prefix, sizeof f->prefix, "%s", v ? v : "");
	v = json_string_value(json_object_get(j, "base_prefix"));
	snprintf(f->base_prefix, sizeof f->base_prefix, "%s", v ? v : "");
}

/* A host program's identity for the cache: resolved path, size, mtime. */
static int host_key(const char *prog, char *key, size_t n)
{
	char real[PATH_MAX];
	struct stat st;
	if (!realpath(prog, real) || stat(real, &st) != 0)
		return -1;
	snprintf(key, n, "host %s -> %s %lld %lld.%09ld", prog, real, (long long)st.st_size,
		 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	return 0;
}

/* `sage` on sagebox's own PATH, for a native/host backend whose sage
 * setting was left at its default and is not there. */
static bool sage_on_path(char *out, size_t n)
{
	const char *path = getenv("PATH");
	while (path && *path) {
		size_t len = strcspn(path, ":");
		if (len && path[0] == '/' && (size_t)snprintf(out, n, "%.*s/sage", (int)len, path) < n &&
		    access(out, X_OK) == 0)
			return true;
		path += len + (path[len] == ':');
	}
	return false;
}

/* Native: the installation's directories, to be bound where they are. The
 * sage script's own directory (its parent when it is a bin/) is wanted, not
 * required: a sage copied into ~/bin would name the home itself, which is
 * refused, and only shell jobs that run `sage` miss it. */
static int bind_install(const struct sb_backend *be, struct sb_sage_found *f, bool asked_sage,
			struct sb_error *err)
{
	int (*op)(void *, const char *const *, bool, json_t *, struct sb_error *) = be->type->ops->bind_install;
	if (!op)
		return 0;
	f->binds = json_array();
	const char *py[] = {f->prefix, f->base_prefix, NULL};
	char guess[PATH_MAX];
	if (!f->prefix[0]) {
		/* an explicit python that could not be asked: its bin/'s parent */
		snprintf(guess, sizeof guess, "%s", f->python);
		for (int i = 0; i < 2; i++) {
			char *s = strrchr(guess, '/');
			if (s && s != guess)
				*s = '\0';
		}
		py[0] = guess;
	}
	/* required when the python said where it lives; a guess is not */
	if (op(be->self, py, f->prefix[0] != '\0', f->binds, err) != 0)
		return -1;
	char real[PATH_MAX], sage_bin[PATH_MAX] = "";
	if (asked_sage && realpath(f->sage, real)) {
		char *s = strrchr(real, '/');
		if (s && s != real)
			*s = '\0';
		snprintf(sage_bin, sizeof sage_bin, "%s", real);
		s = strrchr(real, '/');
		if (s && !strcmp(s, "/bin") && s != real)
			*s = '\0';
		const char *sage_dir[] = {real, NULL};
		struct sb_error ignored = {0};
		op(be->self, sage_dir, false, f->binds, &ignored);
	}
	/* Shell jobs and !cmd run `sage` and `python3` from PATH: that Sage's
	 * own, as its bound dirs hold them (the sage script's dir first). */
	char py_bin[PATH_MAX];
	snprintf(py_bin, sizeof py_bin, "%s", f->python);
	char *s = strrchr(py_bin, '/');
	if (s && s != py_bin)
		*s = '\0';
	const char *dirs[] = {sage_bin, s ? py_bin : ""};
	for (size_t i = 0; i < 2 && be->type->ops->add_path; i++)
		if (dirs[i][0] && be->type->ops->add_path(be->self, dirs[i]) == 1) {
			if (!f->path)
				f->path = json_array();
			json_array_append_new(f->path, json_string(dirs[i]));
		}
	return 0;
}

/* "PROG ARG: what happened" appended to what was tried (cut at its end). */
static void note(char *tried, size_t n, size_t *len, const char *prog, const char *arg, const char *what)
{
	int w = snprintf(tried + *len, n - *len, "%s%s %s: %s", *len ? "; " : "", prog, arg, what);
	*len = w < 0 || (size_t)w >= n - *len ? n - 1 : *len + (size_t)w;
}

void sb_sage_found_clear(struct sb_sage_found *f)
{
	json_decref(f->binds);
	json_decref(f->path);
	memset(f, 0, sizeof *f);
}

int sb_sage_locate(const struct sb_backend *be, struct sb_config *cfg, struct sb_sage_found *f,
		   struct sb_error *err)
{
	memset(f, 0, sizeof *f);
	const bool on_host = sb_backend_has(be, SB_CAP_HOST_FILES);
	char found[PATH_MAX];
	if (on_host && !cfg->sage_set && !cfg->python_set && access(cfg->sage, X_OK) != 0 &&
	    sage_on_path(found, sizeof found))
		snprintf(cfg->sage, sizeof cfg->sage, "%s", found);
	snprintf(f->sage, sizeof f->sage, "%s", cfg->sage);

	/* The candidates, in order: the python setting alone when it is set
	 * (it wins, even unchecked); else sage's own Python, then the
	 * setting's default (/usr/bin/python3). */
	const char *const by_python[] = {cfg->python, "-I", "-c", SNIPPET, NULL};
	const char *const by_sage[] = {cfg->sage, "--python", "-c", SNIPPET, NULL};
	const char *const by_system[] = {cfg->python /* the default */, "-I", "-c", SNIPPET, NULL};
	const char *const *tries[3] = {by_sage, by_system, NULL};
	if (cfg->python_set)
		tries[0] = by_python, tries[1] = NULL;

	/* What the answer depends on besides the program asked. */
	char dep[768] = "";
	if (be->type->ops->locate_key && be->type->ops->locate_key(be->self, dep, sizeof dep, err) != 0)
		return -1;
	/* On the host: ask the host itself (a native sandbox shows only the
	 * system directories until it knows which installation to bind). */
	struct sb_backend *host = NULL;
	const struct sb_backend *asker = be;
	if (on_host && sb_backend_has(be, SB_CAP_ISOLATED)) {
		struct sb_backend_settings hs;
		sb_runner_backend_settings(cfg, &hs);
		host = sb_backend_open_type(sb_backend_type_unisolated(), &hs, err);
		if (!host)
			return -1;
		asker = host;
	}
	char tried[1400] = "";
	size_t tl = 0;
	int rc = -1;
	for (size_t i = 0; tries[i] && rc != 0; i++) {
		const char *prog = tries[i][0];
		char key[PATH_MAX + 900];
		char pk[PATH_MAX + 64] = "";
		if (on_host && host_key(prog, pk, sizeof pk) != 0) {
			note(tried, sizeof tried, &tl, prog, tries[i][1], "not there");
			continue;
		}
		snprintf(key, sizeof key, "v1 %s %s %s", prog, tries[i][1], on_host ? pk : dep);
		if (sb_locate_cache_get(key, f) && (!on_host || access(f->python, X_OK) == 0)) {
			rc = 0;
			break;
		}
		/* Through sh, which makes $HOME first: Sage's scripts refuse to
		 * run without it, and a container's /tmp/home is not made yet. */
		const char *argv[10] = {"/bin/sh", "-c", "mkdir -p \"$HOME\" 2>/dev/null; exec \"$@\"", "sh"};
		for (size_t k = 0; tries[i][k]; k++)
			argv[4 + k] = tries[i][k];
		char said[400];
		json_t *j;
		int got = sb_locate_ask(asker, cfg, argv, MARK, &j, said, sizeof said, err);
		if (got < 0) {
			sb_backend_close(host);
			return -1;
		}
		if (!got) {
			note(tried, sizeof tried, &tl, prog, tries[i][1], said);
			continue;
		}
		take(f, j);
		json_decref(j);
		/* A description: cut short when long (the debug build's
		 * -Wformat-truncation wants the result looked at). */
		if (snprintf(f->how, sizeof f->how, "asked: %s %s%s%s", prog, tries[i][1], dep[0] ? " in " : "", dep) < 0)
			f->how[0] = '\0';
		sb_locate_cache_put(key, f);
		rc = 0;
	}
	sb_backend_close(host);
	if (rc != 0 && cfg->python_set) {
		/* An explicit python wins even when it cannot be asked. */
		snprintf(f->python, sizeof f->python, "%s", cfg->python);
		if (snprintf(f->how, sizeof f->how, "the python setting (not checked: %s)", tried) < 0)
			f->how[0] = '\0';
		rc = 0;
	} else if (rc != 0) {
		sb_fail(err, "cannot find Sage's Python%s%s: tried %s", dep[0] ? " in " : "", dep, tried);
		sb_hint(err, "set python (--python, SAGEBOX_PYTHON) to the python3 that imports sage%s, or sage "
			     "(--sage) to the sage executable%s",
			on_host ? "" : " inside the image", on_host ? " (or put it on PATH)" : " inside the image");
		return -1;
	} else if (cfg->python_set) {
		snprintf(f->how, sizeof f->how, "the python setting");
	}
	snprintf(cfg->python, sizeof cfg->python, "%s", f->python);
	return on_host ? bind_install(be, f, !cfg->python_set, err) : 0;
}

json_t *sb_sage_found_json(const struct sb_sage_found *f)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s?}", "python", f->python, "how", f->how, "sage", f->sage,
			      "sage_version", f->version[0] ? f->version : NULL, "prefix",
			      f->prefix[0] ? f->prefix : NULL, "base_prefix", f->base_prefix[0] ? f->base_prefix : NULL);
	if (f->version[0] == '\0')
		json_object_set_new(o, "sage_version", json_null());
	if (f->cache[0])
		json_object_set_new(o, "cache", json_string(f->cache));
	if (f->binds)
		json_object_set(o, "binds", f->binds);
	if (f->path)
		json_object_set(o, "path", f->path);
	return o;
}
