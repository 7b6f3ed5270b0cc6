/* sagebox run: one job in a new sandbox, from a file or stdin. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/display_out.h"
#include "core/exit_status.h"
#include "core/job.h"
#include "core/result.h"
#include "runner/runner.h"
#include "runner/warm/driver_code.h"
#include "sandbox/registry.h"
#include "sandbox/sandbox.h"
#include "util/buf.h"
#include "util/fd.h"
#include "util/utf8.h"

/* The CLI takes files far larger than a model's tool call may send. */
#define CLI_CODE_MAX_BYTES (8u << 20)
/* at most this long after the output (it takes ~50 ms here) */
#define DRIVER_CODE_SETTLE_MS 3000

static void run_usage(FILE *out)
{
	fprintf(out,
		"usage: sagebox run [--lang sage|python|shell] [--json] [--figures DIR] [SETTINGS] FILE|-\n"
		"\n"
		"Run FILE (or stdin, with -) in a new sandbox and pass its output through.\n"
		"  --lang L      sage, python or shell; default: from the extension\n"
		"                (.sage, .py, .sh), else sage\n"
		"  --json        print one JSON result object instead of the output\n"
		"  --figures DIR save the figures the code displays (plots, plt.show()) as\n"
		"                DIR/figure-N.png; never overwrites a file. Without it, a\n"
		"                line on stderr names each figure\n"
		"  --timeout S   wall-clock limit, 1-600 s (default 30)\n"
		"  --memory M    256m, 512m, 1g, 2g, 4g or 8g (default 256m)\n"
		"  --cpus N      0.1-4 (default 1)      --pids N   16-512 (default 96)\n"
		"  --output-limit-kib K   output kept per stream, 16-2048 (default 256)\n"
		"  --backend B   auto, native, podman, docker or host (no isolation)\n"
		"  --config F    read settings from F; see 'sagebox --help-settings'\n"
		"\n"
		"Exit status: the code's own; 124 timed out; 125 the sandbox could not be set up;\n"
		"128+N killed by signal N.\n");
}

static int read_code(const char *path, struct sb_buf *code)
{
	SB_AUTO_FD fd = -1;
	if (strcmp(path, "-")) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "sagebox: cannot read %s: %s\n", path, strerror(errno));
			return -1;
		}
	}
	int in = fd >= 0 ? fd : STDIN_FILENO;
	char chunk[65536];
	for (;;) {
		ssize_t n = sb_read_retry(in, chunk, sizeof chunk);
		if (n < 0) {
			fprintf(stderr, "sagebox: cannot read %s: %s\n", path, strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		if (code->len + (size_t)n > CLI_CODE_MAX_BYTES) {
			fprintf(stderr, "sagebox: %s is larger than %u MiB; split it up\n", path, CLI_CODE_MAX_BYTES >> 20);
			return -1;
		}
		if (sb_buf_append(code, chunk, (size_t)n)) {
			fprintf(stderr, "sagebox: out of memory\n");
			return -1;
		}
	}
	return 0;
}

/* Save each figure shown as dir/figure-N.png, never over an existing file
 * (O_EXCL) nor through a symlink; a saved one's saved_path is set. -1: some
 * could not be saved (said on stderr). */
static int save_figures(int dfd, const char *dir, struct sb_display *d)
{
	int rc = 0;
	for (size_t i = 0; i < d->n; i++) {
		struct sb_display_item *f = &d->v[i];
		if (f->kind->cls != SB_DCLASS_FIGURE)
			continue;
		char name[32], path[4200];
		snprintf(name, sizeof name, "figure-%u.png", f->index);
		snprintf(path, sizeof path, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
		SB_AUTO_FD fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 || sb_write_all(fd, f->data, f->len)) {
			fprintf(stderr, "sagebox: --figures: cannot save %s: %s%s\n", path, strerror(errno),
				errno == EEXIST ? " (never overwritten: use an empty directory)" : "");
			rc = -1;
			continue;
		}
		f->saved_path = strdup(path);
	}
	return rc;
}

static void print_plain(const struct sb_result *res, bool saving)
{
	if (res->out.data)
		fwrite(res->out.data, 1, res->out.len, stdout);
	fflush(stdout);
	if (res->err.data)
		fwrite(res->err.data, 1, res->err.len, stderr);
	char verdict[1200];
	sb_result_verdict(res, verdict, sizeof verdict);
	if (res->internal_error) {
		fprintf(stderr, "sagebox: %s\n", res->internal_error);
		if (res->hint)
			fprintf(stderr, "sagebox: hint: %s\n", res->hint);
	} else if (res->timed_out || res->output_limit_exceeded || res->cancelled || res->signal) {
		fprintf(stderr, "sagebox: %s\n", verdict);
	}
	if (res->out.truncated || res->err.truncated)
		fprintf(stderr, "sagebox: output was longer than %zu KiB per stream: the middle was cut\n",
			res->max_bytes_per_stream / 1024);
	sb_display_text(stderr, &res->display);
	if (res->display.by_class[SB_DCLASS_FIGURE].kept && !saving)
		fprintf(stderr, "sagebox: figures are not saved: add --figures DIR to save them\n");
}

int sb_cli_run(int argc, char **argv)
{
	struct sb_config cfg;
	int nrest = 0;
	char **rest = sb_cli_settings(argc, argv, &cfg, &nrest);
	if (!rest)
		return SB_EXIT_SANDBOX;
	const char *lang_s = NULL, *path = NULL, *fig_dir = NULL;
	bool json = false, dashdash = false;
	for (int i = 1; i < nrest; i++) {
		const char *a = rest[i];
		if (!dashdash && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			run_usage(stdout);
			free(rest);
			return 0;
		} else if (!dashdash && !strcmp(a, "--json")) {
			json = true;
		} else if (!dashdash && !strcmp(a, "--figures") && i + 1 < nrest) {
			fig_dir = rest[++i];
		} else if (!dashdash && !strncmp(a, "--figures=", 10)) {
			fig_dir = a + 10;
		} else if (!dashdash && !strcmp(a, "--lang") && i + 1 < nrest) {
			lang_s = rest[++i];
		} else if (!dashdash && !strncmp(a, "--lang=", 7)) {
			lang_s = a + 7;
		} else if (!dashdash && !strcmp(a, "--")) {
			dashdash = true;
		} else if (!dashdash && a[0] == '-' && a[1]) {
			fprintf(stderr, "sagebox: run: unknown option '%s'\n", a);
			fprintf(stderr, "sagebox: hint: see 'sagebox run --help' and 'sagebox --help-settings'\n");
			free(rest);
			return SB_EXIT_SANDBOX;
		} else if (!path) {
			path = a;
		} else {
			fprintf(stderr, "sagebox: run: more than one file given ('%s', '%s')\n", path, a);
			free(rest);
			return SB_EXIT_SANDBOX;
		}
	}
	free(rest);
	if (!path) {
		fprintf(stderr, "sagebox: run: no file given (use - for stdin)\n");
		run_usage(stderr);
		return SB_EXIT_SANDBOX;
	}
	struct sb_job job = {.kind = SB_JOB_STATELESS, .limits = cfg.limits};
	job.lang = sb_lang_from_path(path);
	if (lang_s && sb_lang_parse(lang_s, &job.lang)) {
		fprintf(stderr, "sagebox: --lang: unknown language '%s' (allowed: sage, python, shell)\n", lang_s);
		return SB_EXIT_SANDBOX;
	}
	/* Opened before the run: a bad directory is said at once. */
	SB_AUTO_FD fig_dfd = -1;
	if (fig_dir && (!*fig_dir || (fig_dfd = open(fig_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)) {
		fprintf(stderr, "sagebox: --figures: cannot use '%s' as a directory: %s (create it first)\n", fig_dir,
			*fig_dir ? strerror(errno) : "empty name");
		return SB_EXIT_SANDBOX;
	}
	SB_AUTO_BUF code = {0};
	if (read_code(path, &code))
		return SB_EXIT_SANDBOX;
	job.code = code.data ? code.data : "";
	job.code_len = code.len;

	const struct sb_backend_type *bt = sb_backend_type_find(cfg.backend);
	if (bt && !(bt->caps & SB_CAP_ISOLATED))
		fprintf(stderr, "sagebox: WARNING: --backend host runs the code on this machine with NO isolation "
				"(your files, your network); use it only for code you would run yourself\n");

	struct sb_error err = {0};
	struct sb_runner *runner = sb_runner_new(&cfg, &err);
	if (!runner) {
		sb_cli_print_error(&err);
		return SB_EXIT_SANDBOX;
	}
	struct sb_run_out ro;
	sb_runner_run(runner, &job, NULL, &ro); /* (stateless: always a result) */
	struct sb_result res = ro.res;
	if (fig_dfd >= 0)
		save_figures(fig_dfd, fig_dir, &res.display);
	if (json) {
		sb_cli_print_json(sb_result_to_json(&res));
	} else {
		print_plain(&res, fig_dfd >= 0);
	}
	int status = sb_result_exit_status(&res);
	sb_result_free(&res);
	sb_runner_free(runner);
	/* The output is out; the driver's code being made for the next run
	 * (the first run on this machine) finishes before we exit. */
	fflush(stdout);
	sb_driver_code_settle(DRIVER_CODE_SETTLE_MS);
	return status;
}
