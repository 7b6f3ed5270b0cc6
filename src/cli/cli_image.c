/* sagebox image build: a SageMath container image from Debian's sagemath
 * package, built without root and without a container registry, by the
 * backend's image_build operation (sandbox/podman/build.c). This file reads
 * the flags and finds the Debian mirrors this machine's apt uses (for users
 * behind a firewall, and our tests, which reach only Debian's archive). */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/exit_status.h"
#include "cli/cli.h"
#include "runner/backend.h"
#include "sandbox/registry.h"
#include "sandbox/sandbox.h"

#define IMG_DEFAULT_TAG "localhost/sagebox-sage:deb12"
#define IMG_DEFAULT_SUITE "bookworm"
#define IMG_MAX_MIRRORS 16
#define IMG_MAX_APT 32

static void image_usage(FILE *out)
{
	fprintf(out,
		"usage: sagebox image build [--tag TAG] [--suite SUITE] [--mirror URL] [--apt PKG]... [--dry-run]\n"
		"                           [--podman PATH] [--backend podman|docker]\n"
		"\n"
		"Build a SageMath container image from Debian's sagemath package, without root\n"
		"and without a container registry (mmdebstrap --mode=unshare | podman import).\n"
		"Packages come from the Debian mirror this machine's apt uses\n"
		"(/etc/apt/sources.list, /etc/apt/sources.list.d; on another Debian release,\n"
		"the mirrors of its own suites), or from --mirror.\n"
		"The image gets an unprivileged user 'sage' (uid 1000) and pip (python3-pip:\n"
		"pip in a session, when the network setting lists an index); documentation,\n"
		"man pages and translations are left out to keep it small.\n"
		"\n"
		"  --tag TAG      image name (default " IMG_DEFAULT_TAG ")\n"
		"  --suite SUITE  Debian release (default " IMG_DEFAULT_SUITE ")\n"
		"  --mirror URL   Debian mirror to use instead of apt's (repeatable)\n"
		"  --apt PKG      one more Debian package in the image (repeatable)\n"
		"  --dry-run      print the commands, run nothing\n"
		"\n"
		"Needs: mmdebstrap, uidmap (newuidmap) and /etc/subuid, /etc/subgid ranges for\n"
		"this user, and podman (or docker with --backend docker). Takes about 10\n"
		"minutes, downloads about 1 GB; the image is about 3.5 GB.\n");
}

struct mirrors {
	char *line[IMG_MAX_MIRRORS]; /* "deb URI SUITE main" */
	size_t n;
};

/* "deb URI SUITE<suffix> main": suffix is "", "-updates" or "-security". */
static void add_mirror(struct mirrors *m, const char *uri, const char *suite, const char *suffix)
{
	char *s;
	if (m->n >= IMG_MAX_MIRRORS || asprintf(&s, "deb %s %s%s main", uri, suite, suffix) < 0)
		return;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->line[i], s) == 0) {
			free(s);
			return;
		}
	m->line[m->n++] = s;
}

/* Which sources are taken, and for which suite: those of the release
 * `from` (the release itself, its updates, its security updates; other
 * repositories, third-party or backports, stay out), each as the same
 * suite of the release `as`. from and as differ when the sources are
 * another Debian release's (see own_release). */
struct wanted {
	const char *from, *as;
};

/* The part of suite after the release (NULL: not one of its suites). */
static const char *wanted_suffix(const char *suite, const struct wanted *w)
{
	size_t n = strlen(w->from);
	if (strncmp(suite, w->from, n) != 0)
		return NULL;
	const char *rest = suite + n;
	return *rest == '\0' || strcmp(rest, "-updates") == 0 || strcmp(rest, "-security") == 0 ? rest : NULL;
}

static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == '\t') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\t' || p[n] == '\n'))
			return true;
	return false;
}

/* One-line format: "deb [opts] URI SUITE COMPONENT..." */
static void read_list(const char *path, const struct wanted *w, struct mirrors *m)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	char line[2048];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "#\n")] = '\0';
		char *p = line;
		p += strspn(p, " \t");
		if (strncmp(p, "deb", 3) != 0 || (p[3] != ' ' && p[3] != '\t'))
			continue;
		p += 3;
		p += strspn(p, " \t");
		if (*p == '[') {
			char *close = strchr(p, ']');
			if (!close)
				continue;
			p = close + 1;
		}
		char uri[1024], su[128], comps[512] = "";
		if (sscanf(p, "%1023s %127s %511[^\n]", uri, su, comps) < 2)
			continue;
		const char *suffix = wanted_suffix(su, w);
		if (suffix && has_word(comps, "main"))
			add_mirror(m, uri, w->as, suffix);
	}
	fclose(f);
}

/* deb822 format: paragraphs of "Key: value" lines. */
static void flush_paragraph(char *types, char *uris, char *suites, char *comps, bool enabled,
			    const struct wanted *w, struct mirrors *m)
{
	if (enabled && has_word(types, "deb") && has_word(comps, "main")) {
		char *s1, *s2;
		for (char *u = strtok_r(uris, " \t", &s1); u; u = strtok_r(NULL, " \t", &s1)) {
			char sc[512];
			snprintf(sc, sizeof sc, "%s", suites);
			for (char *s = strtok_r(sc, " \t", &s2); s; s = strtok_r(NULL, " \t", &s2)) {
				const char *suffix = wanted_suffix(s, w);
				if (suffix)
					add_mirror(m, u, w->as, suffix);
			}
		}
	}
	types[0] = uris[0] = suites[0] = comps[0] = '\0';
}

static void read_sources(const char *path, const struct wanted *w, struct mirrors *m)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	char line[2048], types[256] = "", uris[1024] = "", suites[512] = "", comps[512] = "";
	bool enabled = true;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#')
			continue;
		if (line[strspn(line, " \t")] == '\0') {
			flush_paragraph(types, uris, suites, comps, enabled, w, m);
			enabled = true;
			continue;
		}
		char *colon = strchr(line, ':');
		if (!colon || line[0] == ' ' || line[0] == '\t')
			continue;
		*colon = '\0';
		char *v = colon + 1 + strspn(colon + 1, " \t");
		if (!strcasecmp(line, "Types"))
			snprintf(types, sizeof types, "%s", v);
		else if (!strcasecmp(line, "URIs"))
			snprintf(uris, sizeof uris, "%s", v);
		else if (!strcasecmp(line, "Suites"))
			snprintf(suites, sizeof suites, "%s", v);
		else if (!strcasecmp(line, "Components"))
			snprintf(comps, sizeof comps, "%s", v);
		else if (!strcasecmp(line, "Enabled"))
			enabled = strcasecmp(v, "no") != 0;
	}
	flush_paragraph(types, uris, suites, comps, enabled, w, m);
	fclose(f);
}

static void find_mirrors(const struct wanted *w, struct mirrors *m)
{
	read_list("/etc/apt/sources.list", w, m);
	glob_t g;
	if (glob("/etc/apt/sources.list.d/*.list", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			read_list(g.gl_pathv[i], w, m);
		globfree(&g);
	}
	if (glob("/etc/apt/sources.list.d/*.sources", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			read_sources(g.gl_pathv[i], w, m);
		globfree(&g);
	}
}

/* This machine's Debian release (VERSION_CODENAME of /etc/os-release), if
 * it is Debian. Its apt sources name only its own suites, and a Debian
 * mirror keeps the other releases too: on Debian 13, whose sources say
 * trixie, the image's bookworm comes from the same mirrors. */
static bool own_release(char *out, size_t n)
{
	FILE *f = fopen("/etc/os-release", "re");
	if (!f)
		return false;
	char line[256], id[64] = "";
	out[0] = '\0';
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = '\0';
		char *v = eq + 1;
		size_t len = strlen(v);
		if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
			v[len - 1] = '\0';
			v++;
		}
		if (!strcmp(line, "ID"))
			snprintf(id, sizeof id, "%s", v);
		else if (!strcmp(line, "VERSION_CODENAME"))
			snprintf(out, n, "%s", v);
	}
	fclose(f);
	return !strcmp(id, "debian") && out[0];
}

static bool bad_name(const char *s)
{
	if (!s[0] || s[0] == '-' || strlen(s) > 255)
		return true;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
			return true;
	return false;
}
/* Debian policy's package name: [a-z0-9][a-z0-9+.-]+ (nothing mmdebstrap
 * could read as an option or a list separator). */
static bool debian_name(const char *s)
{
	if (strlen(s) < 2 || strlen(s) > 100 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '.'))
			return false;
	return true;
}

/* The image is built by a backend that runs images: the one the settings
 * name, or podman when they name one that does not (auto, native, host). */
static int build_with_backend(struct sb_config *cfg, const char *tag, const char *suite, const struct mirrors *m,
			      const char *const *apt, bool dry_run)
{
	const struct sb_backend_type *t = sb_backend_type_find(cfg->backend);
	if (!t || !(t->caps & SB_CAP_IMAGES))
		snprintf(cfg->backend, sizeof cfg->backend, "podman");
	struct sb_error err = {0};
	struct sb_backend *be = sb_runner_backend_open(cfg, &err);
	if (!be) {
		sb_cli_print_error(&err);
		return SB_EXIT_FAILURE;
	}
	const char *sources[IMG_MAX_MIRRORS + 1];
	for (size_t i = 0; i < m->n; i++)
		sources[i] = m->line[i];
	sources[m->n] = NULL;
	struct sb_image_recipe r = {.tag = tag, .suite = suite, .apt_sources = sources, .apt_extra = apt,
				   .dry_run = dry_run};
	int rc = be->type->ops->image_build(be->self, &r);
	sb_backend_close(be);
	return rc;
}

int sb_cli_image(int argc, char **argv)
{
	struct sb_config cfg;
	int nrest = 0;
	char **rest = sb_cli_settings(argc, argv, &cfg, &nrest);
	if (!rest)
		return SB_EXIT_USAGE;
	const char *tag = IMG_DEFAULT_TAG, *suite = IMG_DEFAULT_SUITE, *sub = NULL;
	const char *user_mirrors[IMG_MAX_MIRRORS], *apt[IMG_MAX_APT + 1] = {0};
	size_t nuser = 0, napt = 0;
	bool dry_run = false;
	int ret = 2;
	for (int i = 1; i < nrest; i++) {
		const char *a = rest[i];
		const char **slot = NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			image_usage(stdout);
			ret = 0;
			goto out;
		} else if (!strcmp(a, "--dry-run")) {
			dry_run = true;
			continue;
		} else if (!strcmp(a, "--tag") || !strcmp(a, "-t")) {
			slot = &tag;
		} else if (!strcmp(a, "--suite")) {
			slot = &suite;
		} else if (!strcmp(a, "--mirror")) {
			if (nuser >= IMG_MAX_MIRRORS || i + 1 >= nrest)
				goto bad;
			user_mirrors[nuser++] = rest[++i];
			continue;
		} else if (!strcmp(a, "--apt") || !strncmp(a, "--apt=", 6)) {
			const char *pkg = a[5] == '=' ? a + 6 : i + 1 < nrest ? rest[++i] : "";
			if (!debian_name(pkg)) {
				fprintf(stderr, "sagebox: image: --apt takes a Debian package name (lower case letters, "
						"digits, '+', '-', '.'), not '%s'\n",
					pkg);
				goto bad;
			}
			if (napt >= IMG_MAX_APT) {
				fprintf(stderr, "sagebox: image: at most %d --apt packages\n", IMG_MAX_APT);
				goto bad;
			}
			apt[napt++] = pkg;
			continue;
		} else if (!strncmp(a, "--tag=", 6)) {
			tag = a + 6;
			continue;
		} else if (!strncmp(a, "--suite=", 8)) {
			suite = a + 8;
			continue;
		} else if (!strncmp(a, "--mirror=", 9)) {
			if (nuser >= IMG_MAX_MIRRORS)
				goto bad;
			user_mirrors[nuser++] = a + 9;
			continue;
		} else if (a[0] != '-' && !sub) {
			sub = a;
			continue;
		} else {
			fprintf(stderr, "sagebox: image: unknown option '%s'\n", a);
			goto bad;
		}
		if (i + 1 >= nrest) {
			fprintf(stderr, "sagebox: %s needs a value\n", a);
			goto bad;
		}
		*slot = rest[++i];
	}
	if (!sub || strcmp(sub, "build") != 0) {
		image_usage(stderr);
		goto out;
	}
	if (bad_name(tag)) {
		fprintf(stderr, "sagebox: refusing tag '%s': it is empty, starts with '-' or holds whitespace "
				"or control characters\n",
			tag);
		goto out;
	}
	if (bad_name(suite) || strchr(suite, '/')) {
		fprintf(stderr, "sagebox: bad suite '%s'\n", suite);
		goto out;
	}
	struct mirrors m = {0};
	for (size_t i = 0; i < nuser; i++) {
		if (bad_name(user_mirrors[i])) {
			fprintf(stderr, "sagebox: bad mirror '%s'\n", user_mirrors[i]);
			goto out;
		}
		add_mirror(&m, user_mirrors[i], suite, "");
	}
	if (m.n == 0)
		find_mirrors(&(struct wanted){suite, suite}, &m);
	char own[64];
	if (m.n == 0 && own_release(own, sizeof own) && strcmp(own, suite) != 0)
		find_mirrors(&(struct wanted){own, suite}, &m);
	if (m.n == 0) {
		fprintf(stderr, "sagebox: no Debian mirror for '%s' (main) in /etc/apt/sources.list or "
				"/etc/apt/sources.list.d\n"
				"sagebox: hint: name one: sagebox image build --mirror http://deb.debian.org/debian\n",
			suite);
		ret = SB_EXIT_FAILURE;
		goto out;
	}
	ret = build_with_backend(&cfg, tag, suite, &m, apt, dry_run);
	for (size_t i = 0; i < m.n; i++)
		free(m.line[i]);
out:
	free(rest);
	return ret;
bad:
	image_usage(stderr);
	free(rest);
	return SB_EXIT_USAGE;
}

