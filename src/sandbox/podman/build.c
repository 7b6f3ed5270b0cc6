/* The podman/docker backend's image_build operation: a SageMath container
 * image from Debian's sagemath package, built without root and without a
 * container registry:
 *
 *   mmdebstrap --mode=unshare --variant=apt --include=sagemath,python3,python3-pip,singular-doc \
 *       SUITE - <apt sources> | podman import ... - TAG
 *
 * then a check that Sage runs in it the way sagebox runs it, and the tag.
 * `sagebox image build` (cli/cli_image.c) chooses the tag, the suite and
 * the Debian mirrors. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/exit_status.h"
#include "sandbox/podman/podman.h"
#include "sandbox/sandbox.h"
#include "util/fd.h"

extern char **environ;

/* mmdebstrap builds the ~3.5 GB root in a temporary directory before it
 * writes the tarball, in $TMPDIR or /tmp. Debian 13 mounts /tmp as a tmpfs
 * of half the memory: the root would fill it (and the memory). Unless the
 * caller chose a TMPDIR, it goes to /var/tmp, on disk. build_environ:
 * environ, or a copy of its pointers with TMPDIR added (free that array). */
static const char *user_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	return t && *t ? t : NULL;
}

static char **build_environ(void)
{
	if (user_tmpdir())
		return environ;
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof *env);
	if (!env)
		return environ;
	memcpy(env, environ, n * sizeof *env);
	env[n] = (char *)"TMPDIR=/var/tmp";
	return env;
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
	if (SB_RETRY_EINTR(waitpid(pid, &st, 0)) < 0)
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

int pm_image_build(const struct pm_self *pm, const struct sb_image_recipe *r)
{
	const enum pm_engine eng = pm->eng;
	const char *exe = pm->exe;
	const char *tag = r->tag, *suite = r->suite;
	size_t n_sources = 0;
	while (r->apt_sources[n_sources])
		n_sources++;
	if (geteuid() == 0 && !r->dry_run) {
		fprintf(stderr, "sagebox: refusing to build as root: the image would land in root's container "
				"storage, which the %s backend (rootless only) never uses\n"
				"sagebox: hint: run this as the user who runs sagebox\n",
			pm_engine_name(eng));
		return SB_EXIT_FAILURE;
	}
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
	/* python3-pip: Debian's sagemath has no pip (the official image has
	 * Sage's); with the user's `network` list allowing an index, pip in a
	 * session installs into its /work/.local (driver/pipenv.py). Without a
	 * list it reaches nothing. singular-doc for Singular's info file:
	 * Sage's singular.<cmd>? help reads it (the rest of that package, its
	 * HTML, is excluded below). */
	char include[1024] = "--include=sagemath,python3,python3-pip,singular-doc";
	for (size_t i = 0; r->apt_extra && r->apt_extra[i]; i++) {
		size_t l = strlen(include);
		snprintf(include + l, sizeof include - l, ",%s", r->apt_extra[i]);
	}
	mm[n++] = include;
	mm[n++] = "--dpkgopt=path-exclude=/usr/share/man/*";
	mm[n++] = "--dpkgopt=path-exclude=/usr/share/doc/*";
	mm[n++] = "--dpkgopt=path-include=/usr/share/doc/*/copyright";
	mm[n++] = "--dpkgopt=path-exclude=/usr/share/locale/*";
	mm[n++] = "--dpkgopt=path-exclude=/usr/share/info/*";
	mm[n++] = "--dpkgopt=path-include=/usr/share/info/singular.info";
	mm[n++] = "--dpkgopt=path-exclude=/usr/share/lintian/*";
	/* Java's postinst (jmol, a sagemath dependency) fails without the
	 * man directories that path-exclude keeps from being created. */
	mm[n++] = "--essential-hook=for s in 1 2 3 4 5 6 7 8; do mkdir -p \"$1/usr/share/man/man$s\"; done";
	char hook[1024];
	snprintf(hook, sizeof hook, "--customize-hook=%s", sage_user_hook);
	mm[n++] = hook;
	mm[n++] = suite;
	mm[n++] = "-";
	for (size_t i = 0; i < n_sources && n < 60; i++)
		mm[n++] = r->apt_sources[i];
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

	const char *tmpdir = user_tmpdir() ? user_tmpdir() : "/var/tmp";
	fprintf(stderr, "sagebox: building %s from Debian %s's sagemath package with:\n", tag, suite);
	fprintf(stderr, "  TMPDIR=%s", tmpdir);
	print_argv(mm);
	fprintf(stderr, "  |");
	print_argv(im);
	if (r->dry_run)
		return SB_EXIT_OK;
	fprintf(stderr,
		"sagebox: this downloads about 1 GB from %s and takes about 10 minutes on a\n"
		"         2-CPU machine with a nearby mirror; the image is about 3.5 GB. Progress follows.\n",
		n_sources ? r->apt_sources[0] + 4 : "the mirror");

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
	char **mm_env = build_environ();
	int rc = posix_spawnp(&mm_pid, "mmdebstrap", &fa, &attr, (char *const *)mm, mm_env);
	if (mm_env != environ)
		free(mm_env);
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
					"--add-subgids 100000-165535 $USER), the uidmap package and about 4 GB free "
					"in %s (TMPDIR)\n", tmpdir);
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
