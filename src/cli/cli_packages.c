/* sagebox packages add|list|remove: the user's package presets.
 *
 * `add` is the user's own command on the host, never the model's: it runs
 * the host's Sage Python as `-m pip install --target DIR --only-binary=:all:`
 * with its only way out a proxy of ours (net/proxy.c, the `network`
 * allow-list, started on 127.0.0.1 for this command alone; its audit lines
 * go to the audit_log when one is set). Wheels only:
 * installing a wheel unpacks files and runs none of the package's code on
 * this machine (an sdist would run its build script here). DIR
 * (packages/packages.h) is bound read-only into every sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/exit_status.h"
#include "mcp/audit.h"
#include "net/proxy.h"
#include "packages/packages.h"
#include "runner/sage/locate.h"
#include "runner/backend.h"
#include "sandbox/sandbox_user.h"
#include "sandbox/registry.h"
#include "util/fd.h"

extern char **environ;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sagebox packages add [--index-url URL] NAME[==VERSION]...\n"
		"       sagebox packages list [--json]\n"
		"       sagebox packages remove NAME...\n"
		"\n"
		"Python packages for every sandbox, chosen by you (never by the model).\n"
		"add downloads wheels through sagebox's network proxy (the network setting\n"
		"must allow the index, e.g. --network pypi.org,files.pythonhosted.org) and\n"
		"installs them with the host's Sage Python's pip (wheels only: no package\n"
		"code runs on this machine) into the packages directory:\n"
		"  $XDG_DATA_HOME/sagebox/site-packages (default ~/.local/share/sagebox/site-packages;\n"
		"  as root without XDG_DATA_HOME: /var/lib/sagebox/site-packages)\n"
		"Every sandbox sees it read-only at " SB_PACKAGES_MOUNT ", at the end of\n"
		"sys.path (Sage's own modules come first), a running `sagebox mcp` from\n"
		"its next call. remove deletes a package's files (its dependencies stay).\n"
		"\n"
		"  --index-url URL  the simple index to use instead of pip's configured one\n"
		"  --json           list: as JSON\n");
}

/* The host's Sage Python: the one native runs (asked on the host, cached). */
static int host_python(struct sb_config *cfg, char *py, size_t n)
{
	struct sb_backend_settings hs;
	struct sb_error err = {0};
	sb_runner_backend_settings(cfg, &hs);
	struct sb_backend *host = sb_backend_open_type(sb_backend_type_unisolated(), &hs, &err);
	struct sb_sage_found f;
	if (!host || sb_sage_locate(host, cfg, &f, &err) != 0) {
		sb_cli_print_error(&err);
		sb_backend_close(host);
		return -1;
	}
	snprintf(py, n, "%s", f.python);
	sb_sage_found_clear(&f);
	sb_backend_close(host);
	return 0;
}

static int wait_child(pid_t pid)
{
	int st = 0;
	if (SB_RETRY_EINTR(waitpid(pid, &st, 0)) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct proxy_run {
	pid_t pid;
	int port;
	int control; /* our end: closing it ends the proxy */
	int audit;   /* an unnamed file the proxy's audit lines go to */
};

/* The allow-list proxy on 127.0.0.1:0 in a child of ours, for pip. */
static int proxy_start(const struct sb_config *cfg, struct proxy_run *px)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	int ctl[2] = {-1, -1};
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char tmpl[] = "/tmp/sagebox-packages-audit-XXXXXX";
	px->audit = mkostemp(tmpl, O_CLOEXEC);
	if (px->audit >= 0)
		unlink(tmpl);
	if (lfd < 0 || px->audit < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl)) {
		fprintf(stderr, "sagebox: packages: cannot start the proxy: %s\n", strerror(errno));
		return -1;
	}
	px->port = ntohs(a.sin_port);
	uid_t uid = 0;
	gid_t gid = 0;
	struct sb_error err = {0};
	if (geteuid() == 0 && sb_sandbox_user_resolve(cfg->sandbox_user, &uid, &gid, &err)) {
		sb_cli_print_error(&err);
		return -1;
	}
	px->pid = fork();
	if (px->pid == 0) {
		close(ctl[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* Never as root (as `sagebox proxy`): the proxy needs nothing of it. */
		if (geteuid() == 0 && (sb_sandbox_user_become(uid, gid) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))) {
			fprintf(stderr, "sagebox: packages: the proxy cannot become %s: %s\n", cfg->sandbox_user,
				strerror(errno));
			_exit(1);
		}
		_exit(sb_proxy_run(&cfg->net, px->audit, ctl[1], lfd, "packages"));
	}
	close(lfd);
	close(ctl[1]);
	px->control = ctl[0];
	if (px->pid < 0) {
		fprintf(stderr, "sagebox: packages: fork: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* End the proxy; copy its audit lines to the audit log (log: -1, none)
 * and print what it refused. Returns how many it refused. */
static int proxy_stop(struct proxy_run *px, int log)
{
	close(px->control);
	wait_child(px->pid);
	int refused = 0;
	FILE *f = fdopen(px->audit, "r");
	if (!f)
		return 0;
	rewind(f);
	char line[2048];
	while (fgets(line, sizeof line, f)) {
		/* one write per line: whole lines among a running server's */
		if (log >= 0 && write(log, line, strlen(line)) < 0)
			fprintf(stderr, "sagebox: packages: cannot write the audit log: %s\n", strerror(errno));
		json_t *o = json_loads(line, 0, NULL);
		if (o && json_is_false(json_object_get(o, "allowed"))) {
			const char *reason = json_string_value(json_object_get(o, "reason"));
			if (reason && !strncmp(reason, "sagebox: ", 9))
				reason += 9;
			fprintf(stderr, "sagebox: the proxy refused %s:%d: %s\n",
				json_string_value(json_object_get(o, "host")),
				(int)json_integer_value(json_object_get(o, "port")), reason ? reason : "refused");
			refused++;
		}
		json_decref(o);
	}
	fclose(f);
	return refused;
}

/* The caller's environment for pip (the user's own command: their pip
 * configuration counts), every proxy variable replaced by ours. */
static char **pip_env(const char *proxy_url)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 6, sizeof *env);
	if (!env)
		return NULL;
	static const char *const drop[] = {"http_proxy=", "https_proxy=", "all_proxy=", "no_proxy=", "pip_proxy="};
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool skip = false;
		for (size_t j = 0; j < sizeof drop / sizeof *drop; j++)
			skip |= !strncasecmp(environ[i], drop[j], strlen(drop[j]));
		if (!skip)
			env[k++] = environ[i];
	}
	static char vars[4][128];
	const char *names[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"};
	for (size_t i = 0; i < 4; i++) {
		snprintf(vars[i], sizeof vars[i], "%s=%s", names[i], proxy_url);
		env[k++] = vars[i];
	}
	/* pip's advice to root to use a venv: --target is not the system's. */
	env[k++] = "PIP_ROOT_USER_ACTION=ignore";
	env[k] = NULL;
	return env;
}

static int run_pip(const char *py, const char *dir, const char *index, const char *proxy_url, char **names,
		   int nnames)
{
	const char **argv = calloc((size_t)nnames + 20, sizeof *argv);
	char **env = pip_env(proxy_url);
	if (!argv || !env) {
		free(argv);
		free(env);
		return -1;
	}
	size_t n = 0;
	const char *fixed[] = {py, "-m", "pip", "install", "--target", dir, "--upgrade", "--only-binary=:all:",
			       "--no-input", "--disable-pip-version-check", "--no-cache-dir", "--proxy",
			       proxy_url};
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
		argv[n++] = fixed[i];
	if (index) {
		argv[n++] = "--index-url";
		argv[n++] = index;
	}
	argv[n++] = "--";
	for (int i = 0; i < nnames; i++)
		argv[n++] = names[i];
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid == 0) {
		/* Files others can read: the sandbox user is "other" to them. */
		umask(022);
		execve(py, (char *const *)argv, env);
		fprintf(stderr, "sagebox: packages: cannot run %s: %s\n", py, strerror(errno));
		_exit(127);
	}
	free(argv);
	free(env);
	return pid < 0 ? -1 : wait_child(pid);
}

static int has_pip(const char *py)
{
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execl(py, py, "-c", "import pip", (char *)NULL);
		_exit(127);
	}
	return pid > 0 && wait_child(pid) == 0;
}

static int add(struct sb_config *cfg, char **args, int nargs)
{
	const char *index = NULL;
	char **names = calloc((size_t)nargs + 1, sizeof *names);
	int nnames = 0;
	if (!names)
		return SB_EXIT_FAILURE;
	for (int i = 0; i < nargs; i++) {
		if (!strcmp(args[i], "--index-url") && i + 1 < nargs)
			index = args[++i];
		else if (!strncmp(args[i], "--index-url=", 12))
			index = args[i] + 12;
		else if (!sb_packages_valid_requirement(args[i])) {
			fprintf(stderr, "sagebox: packages add: '%s' is not a package name\n"
					"sagebox: hint: give project names as on PyPI, optionally with one version "
					"clause: sympy-extras, mpmath==1.3.0 (no paths, URLs or pip options)\n",
				args[i]);
			free(names);
			return SB_EXIT_USAGE;
		} else
			names[nnames++] = args[i];
	}
	if (!nnames || (index && strncmp(index, "http://", 7) && strncmp(index, "https://", 8))) {
		fprintf(stderr, nnames ? "sagebox: packages add: --index-url takes an http:// or https:// URL\n"
				       : "sagebox: packages add: name at least one package\n");
		free(names);
		return SB_EXIT_USAGE;
	}
	if (!cfg->net.n) {
		fprintf(stderr, "sagebox: packages add downloads through sagebox's network proxy, and the network "
				"setting is none (nothing may be reached)\n"
				"sagebox: hint: allow the package index: sagebox packages add --network "
				"pypi.org,files.pythonhosted.org NAME (or set network in the config file)\n");
		free(names);
		return SB_EXIT_USAGE;
	}
	char dir[PATH_MAX], py[PATH_MAX];
	struct sb_error err = {0};
	if (sb_packages_dir(dir, sizeof dir, &err)) {
		sb_cli_print_error(&err);
		free(names);
		return SB_EXIT_FAILURE;
	}
	if (host_python(cfg, py, sizeof py)) {
		free(names);
		return SB_EXIT_FAILURE;
	}
	if (!has_pip(py)) {
		fprintf(stderr, "sagebox: packages add: Sage's Python %s has no pip\n"
				"sagebox: hint: install it (Debian, Ubuntu: sudo apt install python3-pip)\n",
			py);
		free(names);
		return SB_EXIT_FAILURE;
	}
	if (sb_packages_make_dir(dir, &err)) {
		sb_cli_print_error(&err);
		free(names);
		return SB_EXIT_FAILURE;
	}
	/* audit_log set: what went out (or was refused) is on record there,
	 * as the server's sandboxes' is. Opened first: never download unseen. */
	struct sb_audit log = {.fd = -1};
	if (cfg->audit_log[0] && sb_audit_open(&log, cfg->audit_log, &err)) {
		sb_cli_print_error(&err);
		free(names);
		return SB_EXIT_FAILURE;
	}
	struct proxy_run px = {.pid = -1, .control = -1, .audit = -1};
	if (proxy_start(cfg, &px)) {
		sb_audit_close(&log);
		free(names);
		return SB_EXIT_FAILURE;
	}
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", px.port);
	fprintf(stderr, "sagebox: installing into %s with %s -m pip, through the proxy (network = %s)\n", dir, py,
		cfg->network);
	int rc = run_pip(py, dir, index, url, names, nnames);
	int refused = proxy_stop(&px, log.fd);
	sb_audit_close(&log);
	free(names);
	if (rc != 0) {
		fprintf(stderr, "sagebox: packages add: pip failed (exit status %d)\n", rc);
		if (refused)
			fprintf(stderr, "sagebox: hint: add the refused hosts to the network setting\n");
		else
			fprintf(stderr, "sagebox: hint: only wheels are installed (--only-binary=:all:: a wheel runs "
					"none of its code here); a package published only as source (sdist) cannot be "
					"added\n");
		return SB_EXIT_FAILURE;
	}
	char why[PATH_MAX + 128];
	if (!sb_packages_bindable(dir, why, sizeof why) && why[0])
		fprintf(stderr, "sagebox: warning: sandboxes will not see %s: %s\n", dir, why);
	else
		fprintf(stderr, "sagebox: sandboxes see %s read-only at %s, those of a running `sagebox mcp` too "
				"(from their next call)\n",
			dir, SB_PACKAGES_MOUNT);
	return 0;
}

static int list(bool json)
{
	char dir[PATH_MAX];
	struct sb_error err = {0};
	if (sb_packages_dir(dir, sizeof dir, &err)) {
		sb_cli_print_error(&err);
		return SB_EXIT_FAILURE;
	}
	json_t *l = sb_packages_list(dir);
	if (json) {
		sb_cli_print_json(json_pack("{s:s, s:s, s:O}", "dir", dir, "mount", SB_PACKAGES_MOUNT, "installed", l));
	} else {
		printf("%s%s\n", dir, json_array_size(l) ? "" : ": no packages");
		size_t i;
		json_t *it;
		json_array_foreach(l, i, it)
			printf("  %s %s\n", json_string_value(json_object_get(it, "name")),
			       json_string_value(json_object_get(it, "version")));
	}
	json_decref(l);
	return 0;
}

static int remove_all(char **names, int n)
{
	char dir[PATH_MAX], removed[512];
	struct sb_error err = {0};
	if (!n) {
		fprintf(stderr, "sagebox: packages remove: name at least one package\n");
		return SB_EXIT_USAGE;
	}
	if (sb_packages_dir(dir, sizeof dir, &err)) {
		sb_cli_print_error(&err);
		return SB_EXIT_FAILURE;
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		if (sb_packages_remove(dir, names[i], removed, sizeof removed, &err)) {
			sb_cli_print_error(&err);
			rc = SB_EXIT_FAILURE;
		} else {
			fprintf(stderr, "sagebox: removed %s from %s\n", removed, dir);
		}
	}
	return rc;
}

int sb_cli_packages(int argc, char **argv)
{
	struct sb_config cfg;
	int nrest = 0, rc = SB_EXIT_USAGE;
	char **rest = sb_cli_settings(argc, argv, &cfg, &nrest);
	if (!rest)
		return SB_EXIT_USAGE;
	const char *sub = nrest > 1 ? rest[1] : "";
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		usage(stdout);
		rc = 0;
	} else if (!strcmp(sub, "add")) {
		rc = add(&cfg, rest + 2, nrest - 2);
	} else if (!strcmp(sub, "list") && nrest <= 3 && (nrest == 2 || !strcmp(rest[2], "--json"))) {
		rc = list(nrest == 3);
	} else if (!strcmp(sub, "remove")) {
		rc = remove_all(rest + 2, nrest - 2);
	} else {
		if (sub[0])
			fprintf(stderr, "sagebox: packages: unknown command or option '%s'\n", sub);
		usage(stderr);
	}
	free(rest);
	return rc;
}
