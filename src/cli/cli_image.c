/* sagebox image build: a SageMath container image from Debian's sagemath
 * package, built without root and without a container registry:
 *
 *   mmdebstrap --mode=unshare --variant=apt --include=sagemath,python3 \
 *       bookworm - <this machine's Debian mirrors> | podman import ... - TAG
 *
 * For users behind a firewall (and our tests, which reach only Debian's
 * archive). The mirror is the one this machine's apt uses. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/exit_status.h"
#include "cli/cli.h"
#include "sandbox/podman/podman.h"

extern char **environ;

#define IMG_DEFAULT_TAG "localhost/sagebox-sage:deb12"
#define IMG_DEFAULT_SUITE "bookworm"
#define IMG_MAX_MIRRORS 16

static void image_usage(FILE *out)
{
	fprintf(out,
		"usage: sagebox image build [--tag TAG] [--suite SUITE] [--mirror URL] [--dry-run]\n"
		"                           [--podman PATH] [--backend podman|docker]\n"
		"\n"
		"Build a SageMath container image from Debian's sagemath package, without root\n"
		"and without a container registry (mmdebstrap --mode=unshare | podman import).\n"
		"Packages come from the Debian mirror this machine's apt uses\n"
		"(/etc/apt/sources.list, /etc/apt/sources.list.d), or from --mirror.\n"
		"The image gets an unprivileged user 'sage' (uid 1000); documentation, man\n"
		"pages and translations are left out to keep it small.\n"
		"\n"
		"  --tag TAG      image name (default " IMG_DEFAULT_TAG ")\n"
		"  --suite SUITE  Debian release (default " IMG_DEFAULT_SUITE ")\n"
		"  --mirror URL   Debian mirror to use instead of apt's (repeatable)\n"
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

static void add_mirror(struct mirrors *m, const char *uri, const char *suite)
{
	char *s;
	if (m->n >= IMG_MAX_MIRRORS || asprintf(&s, "deb %s %s main", uri, suite) < 0)
		return;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->line[i], s) == 0) {
			free(s);
			return;
		}
	m->line[m->n++] = s;
}

/* The suites of one release we want: the release, its updates, its
 * security updates. Other repositories (third-party, backports) stay out. */
static bool wanted_suite(const char *suite, const char *want)
{
	size_t n = strlen(want);
	if (strncmp(suite, want, n) != 0)
		return false;
	return suite[n] == '\0' || strcmp(suite + n, "-updates") == 0 || strcmp(suite + n, "-security") == 0;
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
static void read_list(const char *path, const char *suite, struct mirrors *m)
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
		if (wanted_suite(su, suite) && has_word(comps, "main"))
			add_mirror(m, uri, su);
	}
	fclose(f);
}

/* deb822 format: paragraphs of "Key: value" lines. */
static void flush_paragraph(char *types, char *uris, char *suites, char *comps, bool enabled, const char *suite,
			    struct mirrors *m)
{
	if (enabled && has_word(types, "deb") && has_word(comps, "main")) {
		char *s1, *s2;
		for (char *u = strtok_r(uris, " \t", &s1); u; u = strtok_r(NULL, " \t", &s1)) {
			char sc[512];
			snprintf(sc, sizeof sc, "%s", suites);
			for (char *s = strtok_r(sc, " \t", &s2); s; s = strtok_r(NULL, " \t", &s2))
				if (wanted_suite(s, suite))
					add_mirror(m, u, s);
		}
	}
	types[0] = uris[0] = suites[0] = comps[0] = '\0';
}

static void read_sources(const char *path, const char *suite, struct mirrors *m)
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
			flush_paragraph(types, uris, suites, comps, enabled, suite, m);
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
	flush_paragraph(types, uris, suites, comps, enabled, suite, m);
	fclose(f);
}

static void find_mirrors(const char *suite, struct mirrors *m)
{
	read_list("/etc/apt/sources.list", suite, m);
	glob_t g;
	if (glob("/etc/apt/sources.list.d/*.list", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			read_list(g.gl_pathv[i], suite, m);
		globfree(&g);
	}
	if (glob("/etc/apt/sources.list.d/*.sources", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			read_sources(g.gl_pathv[i], suite, m);
		globfree(&g);
	}
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

static void print_argv(const char *const *argv)
{
	for (size_t i = 0; argv[i]; i++) {
		bool plain = strcspn(argv[i], " \t'\"$;&|<>(){}*?!\\`") == strlen(argv[i]) && argv[i][0];
		if (plain) {
			fprintf(stderr, "%s%s", i ? " " : "  ", argv[i]);
			continue;
		}
		fprintf(stderr, "%s'", i ? " " : "  ");
		for (const char *p = argv[i]; *p; p++) {
			if (*p == '\'')
				fputs("'\\''", stderr);
			else
				fputc(*p, stderr);
		}
		fputc('\'', stderr);
	}
	fputc('\n', stderr);
}

/* The sage user: uid/gid 1000, home in the image (unused at run time,
 * where HOME is on the tmpfs). Written directly: the apt variant has no
 * useradd (passwd is not Essential). */
static const char sage_user_hook[] =
	"echo 'sage:x:1000:1000:SageMath:/home/sage:/bin/sh' >> \"$1/etc/passwd\" && "
	"echo 'sage:x:1000:' >> \"$1/etc/group\" && "
	"echo 'sage:*:19000:0:99999:7:::' >> \"$1/etc/shadow\" && "
	"mkdir -p \"$1/home/sage\" && chown 1000:1000 \"$1/home/sage\" && chmod 0750 \"$1/home/sage\"";

static int wait_status(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

static double elapsed_min(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9) / 60.0;
}

static int run_quiet(const char *exe, const char *const *argv, enum pm_engine eng, int timeout_ms, bool show)
{
	struct pm_out o;
	int rc = pm_run(exe, argv, eng, timeout_ms, &o);
	if (rc < 0 && show) {
		char d[512];
		pm_out_describe(&o, d, sizeof d);
		fprintf(stderr, "sagebox: '%s %s' failed: %s\n", exe, argv[1], d);
	}
	pm_out_free(&o);
	return rc;
}

static int build(const struct sb_config *cfg, enum pm_engine eng, const char *tag, const char *suite,
		 struct mirrors *m, bool dry_run)
{
	const char *exe = pm_exe(cfg, eng);
	char tmp_tag[128];
	snprintf(tmp_tag, sizeof tmp_tag, "localhost/sagebox-build-tmp:%ld", (long)getpid());
	char msg[256];
	snprintf(msg, sizeof msg, "sagebox image build: Debian %s sagemath", suite);

	const char *mm[64];
	size_t n = 0;
	mm[n++] = "mmdebstrap";
	/* unshare mode: the whole build runs in a user namespace, as this
	 * user; no root, no setuid helper beyond newuidmap. */
	mm[n++] = "--mode=unshare";
	mm[n++] = "--variant=apt";
	mm[n++] = "--format=tar";
	mm[n++] = "--include=sagemath,python3";
	mm[n++] = "--dpkgopt=path-exclude=/usr/share/man/*";
	mm[n++] = "--dpkgopt=path-exclude=/usr/share/doc/*";
	mm[n++] = "--dpkgopt=path-include=/usr/share/doc/*/copyright";
	mm[n++] = "--dpkgopt=path-exclude=/usr/share/locale/*";
	mm[n++] = "--dpkgopt=path-exclude=/usr/share/info/*";
	mm[n++] = "--dpkgopt=path-exclude=/usr/share/lintian/*";
	/* Java's postinst (jmol, a sagemath dependency) fails without the
	 * man directories that path-exclude keeps from being created. */
	mm[n++] = "--essential-hook=for s in 1 2 3 4 5 6 7 8; do mkdir -p \"$1/usr/share/man/man$s\"; done";
	char hook[1024];
	snprintf(hook, sizeof hook, "--customize-hook=%s", sage_user_hook);
	mm[n++] = hook;
	mm[n++] = suite;
	mm[n++] = "-";
	for (size_t i = 0; i < m->n && n < 60; i++)
		mm[n++] = m->line[i];
	mm[n] = NULL;

	const char *im_p[] = {exe, "--log-level=error", "import",
			      "--change", "USER sage",
			      "--change", "WORKDIR /tmp",
			      "--change", "ENV PATH=/usr/local/bin:/usr/bin:/bin",
			      "--change", "ENV LANG=C.UTF-8",
			      "--change", "CMD [\"/bin/sh\"]",
			      "--change", "LABEL org.opencontainers.image.title=sagebox-sage",
			      "--message", msg, "-", tmp_tag, NULL};
	const char **im = (const char **)im_p;
	if (eng == PM_DOCKER) {
		/* docker has no --log-level on import's level; drop it */
		static const char *im_d[24];
		size_t k = 0;
		for (size_t i = 0; im_p[i]; i++)
			if (i != 1)
				im_d[k++] = im_p[i];
		im_d[k] = NULL;
		im = im_d;
	}

	fprintf(stderr, "sagebox: building %s from Debian %s's sagemath package with:\n", tag, suite);
	print_argv(mm);
	fprintf(stderr, "  |");
	print_argv(im);
	if (dry_run)
		return 0;
	fprintf(stderr,
		"sagebox: this downloads about 1 GB from %s and takes about 10 minutes on a\n"
		"         2-CPU machine with a nearby mirror; the image is about 3.5 GB. Progress follows.\n",
		m->n ? m->line[0] + 4 : "the mirror");

	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		perror("sagebox: pipe");
		return SB_EXIT_FAILURE;
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t all;
	sigemptyset(&all);
	sigaddset(&all, SIGPIPE);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);

	/* The build is the user's own command, not sandboxed code: it keeps
	 * the caller's environment (http_proxy and the like for apt). */
	pid_t mm_pid, im_pid;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	int rc = posix_spawnp(&mm_pid, "mmdebstrap", &fa, &attr, (char *const *)mm, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		fprintf(stderr, "sagebox: cannot start mmdebstrap: %s\n", strerror(rc));
		if (rc == ENOENT)
			fprintf(stderr, "sagebox: hint: install it: sudo apt install mmdebstrap uidmap\n");
		close(p[0]);
		close(p[1]);
		posix_spawnattr_destroy(&attr);
		return SB_EXIT_FAILURE;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0], 0);
	rc = posix_spawnp(&im_pid, exe, &fa, &attr, (char *const *)im, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(p[0]);
	close(p[1]);
	if (rc != 0) {
		fprintf(stderr, "sagebox: cannot start %s: %s\n", exe, strerror(rc));
		kill(mm_pid, SIGTERM);
		wait_status(mm_pid);
		return SB_EXIT_FAILURE;
	}
	int mm_st = wait_status(mm_pid);
	int im_st = wait_status(im_pid);
	bool mm_ok = mm_st >= 0 && WIFEXITED(mm_st) && WEXITSTATUS(mm_st) == 0;
	bool im_ok = im_st >= 0 && WIFEXITED(im_st) && WEXITSTATUS(im_st) == 0;
	const char *rmi[] = {exe, "rmi", tmp_tag, NULL};
	if (!mm_ok || !im_ok) {
		/* A truncated tarball can still import: never keep it. */
		run_quiet(exe, rmi, eng, 120000, false);
		fprintf(stderr, "sagebox: image build failed (%s)\n", !mm_ok ? "mmdebstrap" : "import");
		if (!mm_ok)
			fprintf(stderr, "sagebox: hint: mmdebstrap --mode=unshare needs this user's ranges in "
					"/etc/subuid and /etc/subgid (sudo usermod --add-subuids 100000-165535 "
					"--add-subgids 100000-165535 $USER) and the uidmap package\n");
		return SB_EXIT_FAILURE;
	}

	/* Does Sage start in it, the way sagebox runs it? */
	fprintf(stderr, "sagebox: checking that Sage starts in the new image...\n");
	const char *check_p[] = {exe, "--log-level=error", "run", "--rm", "--pull=never", "--network=none",
				 "--read-only", "--cap-drop=all", "--log-driver=none", "--user", "sage",
				 "--tmpfs", "/tmp:rw,nosuid,nodev,size=64m,mode=1777", "--env", "HOME=/tmp",
				 "--env", "DOT_SAGE=/tmp/dot-sage", "--", tmp_tag, "/usr/bin/python3", "-c",
				 "from sage.all import factor, var; x = var('x'); print(factor(x**4 - 1))", NULL};
	const char **check = check_p;
	if (eng == PM_DOCKER)
		check = check_p + 1, check[0] = exe;
	struct pm_out o;
	if (pm_run(exe, check, eng, 600000, &o) < 0 || !strstr(o.out, "(x^2 + 1)")) {
		char d[512];
		pm_out_describe(&o, d, sizeof d);
		fprintf(stderr, "sagebox: the new image does not run Sage (%s); removing it\n", d);
		pm_out_free(&o);
		run_quiet(exe, rmi, eng, 120000, false);
		return SB_EXIT_FAILURE;
	}
	pm_out_free(&o);

	const char *tagv[] = {exe, "tag", tmp_tag, tag, NULL};
	if (run_quiet(exe, tagv, eng, 60000, true) < 0) {
		run_quiet(exe, rmi, eng, 120000, false);
		return SB_EXIT_FAILURE;
	}
	run_quiet(exe, rmi, eng, 120000, false); /* only untags: TAG keeps the image */

	unsigned long long size = 0;
	const char *insp[] = {exe, "image", "inspect", "--format", "{{.Size}}", tag, NULL};
	if (pm_run(exe, insp, eng, 60000, &o) == 0)
		size = strtoull(o.out, NULL, 10);
	pm_out_free(&o);
	fprintf(stderr, "sagebox: built %s in %.1f minutes, size %.0f MB\n", tag, elapsed_min(&t0),
		(double)size / 1e6);
	printf("%s\n", tag);
	fprintf(stderr, "sagebox: use it with: sagebox run --backend %s --image %s FILE (or image = %s in the "
			"config file)\n",
		pm_engine_name(eng), tag, tag);
	return 0;
}

int sb_cli_image(int argc, char **argv)
{
	struct sb_config cfg;
	char **rest = calloc((size_t)argc + 1, sizeof *rest);
	int nrest = 0;
	if (!rest)
		return SB_EXIT_FAILURE;
	if (sb_cli_load_settings(argc, argv, &cfg, rest, &nrest) < 0) {
		free(rest);
		return SB_EXIT_USAGE;
	}
	const char *tag = IMG_DEFAULT_TAG, *suite = IMG_DEFAULT_SUITE, *sub = NULL;
	const char *user_mirrors[IMG_MAX_MIRRORS];
	size_t nuser = 0;
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
	enum pm_engine eng = cfg.backend == SB_BACKEND_DOCKER ? PM_DOCKER : PM_PODMAN;
	if (geteuid() == 0 && !dry_run) {
		fprintf(stderr, "sagebox: refusing to build as root: the image would land in root's container "
				"storage, which the podman backend (rootless only) never uses\n"
				"sagebox: hint: run this as the user who runs sagebox\n");
		ret = 1;
		goto out;
	}
	struct mirrors m = {0};
	for (size_t i = 0; i < nuser; i++) {
		if (bad_name(user_mirrors[i])) {
			fprintf(stderr, "sagebox: bad mirror '%s'\n", user_mirrors[i]);
			goto out;
		}
		add_mirror(&m, user_mirrors[i], suite);
	}
	if (m.n == 0)
		find_mirrors(suite, &m);
	if (m.n == 0) {
		fprintf(stderr, "sagebox: no Debian mirror for '%s' (main) in /etc/apt/sources.list or "
				"/etc/apt/sources.list.d\n"
				"sagebox: hint: name one: sagebox image build --mirror http://deb.debian.org/debian\n",
			suite);
		ret = 1;
		goto out;
	}
	ret = build(&cfg, eng, tag, suite, &m, dry_run);
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
