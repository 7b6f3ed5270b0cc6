#include "config/config.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/project_dir.h"
#include "sandbox/registry.h"
#include "util/utf8.h"

enum kind { K_UINT, K_CPUS, K_MEMORY, K_OUTPUT_KIB, K_BACKEND, K_ISOLATION, K_PATH, K_IMAGE, K_NAME, K_SIZE, K_SHARE, K_DIR, K_PROJECT, K_NETWORK, K_BOOL, K_INSTANCE };

struct setting {
	const char *key;     /* config file key; the flag is --key with _ as - */
	enum kind kind;
	const char *range;   /* allowed values, for help and errors */
	const char *help;
	unsigned min, max;   /* for K_UINT */
	size_t offset;       /* into struct sb_config */
	size_t size;         /* of the field, for strings */
	size_t bytes_at;     /* K_SIZE: the uint64_t the size goes into in bytes (max: its GiB) */
};

#define F(field) offsetof(struct sb_config, field), sizeof(((struct sb_config *)0)->field)

static const struct setting settings[] = {
	{"backend", K_BACKEND, NULL /* the registry's names */, "where code runs; auto picks native; host has no isolation", 0, 0, F(backend)},
	{"isolation", K_ISOLATION, "warm|fresh", "warm: jobs fork from a warm worker; fresh: one sandbox per call", 0, 0, F(isolation)},
	{"timeout", K_UINT, "1-600 (seconds)", "default wall-clock limit of a job", SB_TIMEOUT_MIN_S, SB_TIMEOUT_MAX_S, F(limits.timeout_s)},
	{"memory", K_MEMORY, "256m|512m|1g|2g|4g|8g", "memory limit of a sandbox", 0, 0, F(limits.memory)},
	{"cpus", K_CPUS, "0.1-4", "CPU limit in cores", 0, 0, F(limits.cpus)},
	{"pids", K_UINT, "16-512", "process/thread limit", SB_PIDS_MIN, SB_PIDS_MAX, F(limits.pids)},
	{"output_limit_kib", K_OUTPUT_KIB, "16-2048 (KiB)", "output kept per stream (head and tail)", 0, 0, F(limits.output_bytes)},
	{"sage", K_PATH, "absolute path", "the sage executable inside the sandbox", 0, 0, F(sage)},
	{"python", K_PATH, "absolute path", "python3 with Sage's modules, inside the sandbox; unset: sage --python is asked (cached), then the default", 0, 0, F(python)},
	{"shell", K_PATH, "absolute path", "shell for shell jobs, inside the sandbox", 0, 0, F(shell)},
	{"podman", K_PATH, "executable name or path", "podman (or docker) executable for the container backends", 0, 0, F(podman)},
	{"image", K_IMAGE, "image reference", "container image with Sage", 0, 0, F(image)},
	{"container_user", K_NAME, "user name or uid", "user inside the container", 0, 0, F(container_user)},
	{"sandbox_user", K_NAME, "user name or uid", "host user the native sandbox drops to when started as root", 0, 0, F(sandbox_user)},
	{"audit_log", K_PATH, "path, empty for off", "JSON-lines log of what the model ran", 0, 0, F(audit_log)},
	{"pool_size", K_UINT, "1-8", "warm workers per language", 1, 8, F(pool_size)},
	{"worker_max_jobs", K_UINT, "1-100000", "recycle a warm worker after this many jobs", 1, 100000, F(worker_max_jobs)},
	{"worker_max_minutes", K_UINT, "1-1440", "recycle a warm worker after this many minutes", 1, 1440, F(worker_max_minutes)},
	{"max_concurrent", K_UINT, "1-32", "jobs running at once", 1, 32, F(max_concurrent)},
	{"max_sessions", K_UINT, "0-32 (0: sessions off)", "open sessions per client", 0, 32, F(max_sessions)},
	{"max_sessions_total", K_UINT, "1-256", "open sessions of all clients together", 1, 256, F(max_sessions_total)},
	{"session_idle_minutes", K_UINT, "1-1440", "a session unused this long is closed", 1, 1440, F(session_idle_minutes)},
	{"workspace_size", K_SIZE, "1m-16g (k, m, g)", "size of a session's /work (a tmpfs), and the most one named workspace keeps on disk", 0, 16, F(workspace_size), offsetof(struct sb_config, workspace_bytes)},
	{"workspaces_total", K_SIZE, "1m-1024g (k, m, g)", "the most one client's named workspaces keep on disk together", 0, 1024, F(workspaces_total), offsetof(struct sb_config, workspaces_total_bytes)},
	{"job_timeout", K_UINT, "1-86400 (seconds)", "the longest a background job may run", 1, 86400, F(job_timeout_s)},
	{"max_jobs", K_UINT, "0-32 (0: jobs off)", "running background jobs per client", 0, 32, F(max_jobs)},
	{"max_jobs_total", K_UINT, "1-256", "running background jobs of all clients together", 1, 256, F(max_jobs_total)},
	{"task_ttl", K_UINT, "60-604800 (seconds)", "the longest an MCP task is kept, from its start (its job is stopped then); a client may ask for less", 60, 604800, F(task_ttl_s)},
	{"share", K_SHARE, "comma-separated host directories, empty for none", "shared READ-ONLY with every sandbox at /data/NAME: the code can read them", 0, 0, F(share)},
	{"network", K_NETWORK, "none, or comma-separated HOST, HOST:PORT, *.DOMAIN (HOST alone: ports 80 and 443)", "hosts the code may reach through sagebox's proxy; every other name, and private or loopback addresses not listed as such, are refused", 0, 0, F(network)},
	{"service", K_BOOL, "true|false (the flag alone: true)", "sagebox mcp connects to (or starts) a user-level service that keeps a warm worker across client restarts (stdio only; falls back to serving in-process)", 0, 0, F(service)},
	{"service_idle_seconds", K_UINT, "1-86400 (seconds)", "the service exits after this long with no client, job or session", 1, 86400, F(service_idle_s)},
	{"instance", K_INSTANCE, "[a-z0-9-]{1,32}, empty for the host name", "this server's name among several behind a router: every session, job and task id names it, so the router sends a request to the instance that holds its id", 0, 0, F(instance)},
	{"drain_timeout", K_UINT, "1-86400 (seconds)", "on SIGTERM or sagebox mcp --drain, how long open sessions and calls may go on while no new ones are taken; then they end", 1, 86400, F(drain_timeout_s)},
	{"metrics_by_client", K_BOOL, "true|false (the flag alone: true)", "label the sessions and jobs in GET /metrics with each client's token name (off: client=\"all\"; the names then show in the metrics)", 0, 0, F(metrics_by_client)},
	{"project_dir", K_PROJECT, "a host directory, empty for off", "bound READ-WRITE at /work/project in the sessions of the local user (stdio, the service; never over HTTP): the code can change what is in it", 0, 0, F(project_dir)},
	{"project_exec", K_BOOL, "true|false (the flag alone: true)", "files in project_dir may be executed in the sandbox (else it is mounted noexec; nosuid and nodev always)", 0, 0, F(project_exec)},
	{"export_dir", K_DIR, "a host directory, empty for off", "file_export copies workspace files here (new names, never overwriting)", 0, 0, F(export_dir)},
};
#define N_SETTINGS (sizeof settings / sizeof settings[0])

/* Allowed values, for help and errors. */
static const char *range_of(const struct setting *s)
{
	return s->kind == K_BACKEND ? sb_backend_names() : s->range;
}

static char host_name[SB_INSTANCE_MAX + 1];
static void host_instance(void)
{
	sb_instance_default(host_name);
}

const char *sb_isolation_name(enum sb_isolation i)
{
	return i == SB_ISOLATION_FRESH ? "fresh" : "warm";
}

void sb_config_defaults(struct sb_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	sb_limits_default(&cfg->limits);
	snprintf(cfg->backend, sizeof cfg->backend, "%s", SB_BACKEND_AUTO);
	cfg->isolation = SB_ISOLATION_WARM;
	snprintf(cfg->sage, sizeof cfg->sage, "/usr/bin/sage");
	snprintf(cfg->python, sizeof cfg->python, "/usr/bin/python3");
	snprintf(cfg->shell, sizeof cfg->shell, "/bin/bash");
	snprintf(cfg->podman, sizeof cfg->podman, "podman");
	snprintf(cfg->image, sizeof cfg->image, "docker.io/sagemath/sagemath:latest");
	snprintf(cfg->container_user, sizeof cfg->container_user, "sage");
	snprintf(cfg->sandbox_user, sizeof cfg->sandbox_user, "nobody");
	snprintf(cfg->network, sizeof cfg->network, "none");
	cfg->pool_size = 1;
	cfg->worker_max_jobs = 10000;
	cfg->worker_max_minutes = 60;
	cfg->max_concurrent = 4;
	cfg->max_sessions = 4;
	cfg->max_sessions_total = 16;
	cfg->session_idle_minutes = 30;
	snprintf(cfg->workspace_size, sizeof cfg->workspace_size, "256m");
	cfg->workspace_bytes = 256ull << 20;
	snprintf(cfg->workspaces_total, sizeof cfg->workspaces_total, "4g");
	cfg->workspaces_total_bytes = 4ull << 30;
	cfg->job_timeout_s = 3600;
	cfg->max_jobs = 4;
	cfg->max_jobs_total = 16;
	cfg->task_ttl_s = 3600;
	cfg->service_idle_s = 600;
	cfg->drain_timeout_s = 300;
}

const char *sb_config_instance(const struct sb_config *cfg)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	if (cfg->instance[0])
		return cfg->instance;
	pthread_once(&once, host_instance);
	return host_name;
}

static const struct setting *find(const char *key)
{
	for (size_t i = 0; i < N_SETTINGS; i++)
		if (!strcmp(settings[i].key, key))
			return &settings[i];
	return NULL;
}

static int bad(struct sb_error *err, const struct setting *s, const char *origin, const char *value,
	       const char *why)
{
	sb_fail(err, "%s: invalid %s '%s'%s%s", origin, s->key, value, why ? ": " : "", why ? why : "");
	return sb_hint(err, "allowed: %s", range_of(s));
}

/* Strict decimal parsing: the whole string, no sign tricks, no overflow. */
static int parse_uint(const char *v, unsigned long *out)
{
	if (!*v || !isdigit((unsigned char)*v))
		return -1;
	char *end;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (errno || *end)
		return -1;
	*out = n;
	return 0;
}

static bool has_control_or_space(const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (*p <= 0x20 || *p == 0x7f)
			return true;
	return false;
}

/* "512k", "256m", "2g", "1048576": bytes, within [1m, max_gib g]. */
static int parse_size(const char *v, uint64_t max_gib, uint64_t *out)
{
	const uint64_t max = max_gib << 30;
	char *end;
	errno = 0;
	if (!isdigit((unsigned char)*v))
		return -1;
	unsigned long long n = strtoull(v, &end, 10);
	unsigned shift = 0;
	if (*end && !end[1])
		shift = tolower((unsigned char)*end) == 'k' ? 10 : tolower((unsigned char)*end) == 'm' ? 20
			: tolower((unsigned char)*end) == 'g' ? 30 : 64;
	else if (*end)
		return -1;
	if (errno || shift == 64 || n > max >> shift)
		return -1;
	n <<= shift;
	if (n < (1ull << 20) || n > max)
		return -1;
	*out = n;
	return 0;
}

/* An existing host directory, resolved. Shared paths end up in mount
 * options and podman's --mount list: no ',' ':' or control characters. */
static const char *host_dir(const char *v, char *real)
{
	if (v[0] != '/')
		return "must be an absolute path";
	if (strpbrk(v, ",:") || has_control_or_space(v))
		return "must not contain ',', ':', spaces or control characters";
	struct stat st;
	if (!realpath(v, real) || stat(real, &st) != 0)
		return "does not exist";
	if (!S_ISDIR(st.st_mode))
		return "is not a directory";
	if (strpbrk(real, ",:") || has_control_or_space(real))
		return "resolves to a path with ',', ':', spaces or control characters";
	return NULL;
}

/* share: each directory, resolved, with a name of its own under /data. */
static int set_shares(struct sb_config *cfg, const struct setting *s, const char *value, const char *origin,
		      struct sb_error *err)
{
	char list[sizeof cfg->share], real[PATH_MAX];
	if (strlen(value) >= sizeof list)
		return bad(err, s, origin, value, "too long");
	snprintf(list, sizeof list, "%s", value);
	unsigned n = 0;
	char dirs[SB_SHARES_MAX][PATH_MAX];
	char *save = NULL;
	for (char *d = strtok_r(list, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
		if (!*d)
			continue;
		if (n == SB_SHARES_MAX)
			return bad(err, s, origin, value, "more than 8 directories");
		const char *why = host_dir(d, real);
		if (!why && !strcmp(real, "/"))
			why = "is the root directory";
		if (why) {
			sb_fail(err, "%s: invalid share '%s': %s", origin, d, why);
			return sb_hint(err, "share takes existing host directories, comma-separated, e.g. "
					    "/home/me/papers,/srv/data");
		}
		for (unsigned i = 0; i < n; i++)
			if (!strcmp(strrchr(dirs[i], '/'), strrchr(real, '/'))) {
				sb_fail(err, "%s: invalid share '%s': another shared directory has the same name %s", origin,
					value, strrchr(real, '/') + 1);
				return sb_hint(err, "each shared directory appears as /data/NAME: give them different names");
			}
		snprintf(dirs[n++], PATH_MAX, "%s", real);
	}
	memcpy(cfg->shares, dirs, sizeof dirs);
	cfg->n_shares = n;
	snprintf(cfg->share, sizeof cfg->share, "%s", value);
	return 0;
}

int sb_config_set(struct sb_config *cfg, const char *key, const char *value, const char *origin,
		  struct sb_error *err)
{
	const struct setting *s = find(key);
	if (!s) {
		sb_fail(err, "%s: unknown setting '%s'", origin, key);
		return sb_hint(err, "run 'sagebox --help-settings' for the list of settings");
	}
	char *field = (char *)cfg + s->offset;
	unsigned long n;
	size_t bad_at;
	/* Every value is shown again as JSON text (status, --help-settings): a
	 * value that is not UTF-8 would make the settings vanish from it. */
	if (!sb_utf8_valid(value, strlen(value), &bad_at)) {
		sb_fail(err, "%s: invalid %s: byte %zu of the value is not UTF-8", origin, s->key, bad_at + 1);
		return sb_hint(err, "settings are UTF-8 text; allowed: %s", range_of(s));
	}
	switch (s->kind) {
	case K_UINT:
		if (parse_uint(value, &n) || n < s->min || n > s->max)
			return bad(err, s, origin, value, "out of range or not a whole number");
		*(unsigned *)(void *)field = (unsigned)n;
		return 0;
	case K_OUTPUT_KIB:
		if (parse_uint(value, &n) || n < SB_OUTPUT_KIB_MIN || n > SB_OUTPUT_KIB_MAX)
			return bad(err, s, origin, value, "out of range or not a whole number");
		cfg->limits.output_bytes = (size_t)n * 1024;
		return 0;
	case K_CPUS: {
		char *end;
		errno = 0;
		double d = strtod(value, &end);
		if (!*value || errno || *end || !isfinite(d) || d < SB_CPUS_MIN - 1e-9 || d > SB_CPUS_MAX + 1e-9)
			return bad(err, s, origin, value, "out of range or not a number");
		cfg->limits.cpus = d;
		return 0;
	}
	case K_MEMORY: {
		char low[sizeof cfg->limits.memory];
		size_t i = 0;
		for (; value[i] && i < sizeof low - 1; i++)
			low[i] = (char)tolower((unsigned char)value[i]);
		low[i] = '\0';
		if (value[i] || sb_memory_parse(low, &cfg->limits.memory_bytes))
			return bad(err, s, origin, value, NULL);
		/* low is one of sb_memory_values here, so it fits. */
		memcpy(cfg->limits.memory, low, strlen(low) + 1);
		return 0;
	}
	case K_SIZE: {
		uint64_t b;
		if (parse_size(value, s->max, &b) || strlen(value) >= s->size)
			return bad(err, s, origin, value, "not a size in range");
		*(uint64_t *)(void *)((char *)cfg + s->bytes_at) = b;
		break;
	}
	case K_SHARE:
		return set_shares(cfg, s, value, origin, err);
	case K_NETWORK: {
		char entry[128];
		const char *why = NULL;
		if (strlen(value) >= s->size)
			return bad(err, s, origin, value, "too long");
		if (sb_netlist_parse(value, &cfg->net, entry, sizeof entry, &why)) {
			sb_fail(err, "%s: invalid network entry '%s': %s", origin, entry, why);
			return sb_hint(err, "network takes none, or comma-separated HOST, HOST:PORT or *.DOMAIN, e.g. "
					    "pypi.org, files.pythonhosted.org, oeis.org");
		}
		sb_netlist_format(&cfg->net, field, s->size);
		return 0;
	}
	case K_DIR: {
		char real[PATH_MAX];
		const char *why = *value ? host_dir(value, real) : NULL;
		if (!why && *value && access(real, W_OK | X_OK) != 0)
			why = "is not writable";
		if (why)
			return bad(err, s, origin, value, why);
		snprintf(field, s->size, "%s", *value ? real : "");
		return 0;
	}
	case K_PROJECT: {
		char real[PATH_MAX];
		const char *why = *value ? host_dir(value, real) : NULL;
		if (!why && *value)
			why = sb_project_dir_refused(real);
		if (!why && *value && access(real, W_OK | X_OK) != 0)
			why = "is not writable";
		if (why) {
			sb_fail(err, "%s: invalid project_dir '%s': %s", origin, value, why);
			return sb_hint(err, "name a folder of one project, e.g. ~/thesis: the code in the sandbox can "
					    "change everything in it");
		}
		snprintf(field, s->size, "%s", *value ? real : "");
		return 0;
	}
	case K_BACKEND:
		if (!sb_backend_type_find(value))
			return bad(err, s, origin, value, NULL);
		break;
	case K_INSTANCE:
		if (*value && !sb_instance_name_ok(value))
			return bad(err, s, origin, value, "a name of 1 to 32 lowercase letters, digits and '-'");
		break;
	case K_BOOL:
		if (!strcmp(value, "true") || !strcmp(value, "1") || !strcmp(value, "yes") || !strcmp(value, "on"))
			*(bool *)(void *)field = true;
		else if (!strcmp(value, "false") || !strcmp(value, "0") || !strcmp(value, "no") || !strcmp(value, "off"))
			*(bool *)(void *)field = false;
		else
			return bad(err, s, origin, value, NULL);
		return 0;
	case K_ISOLATION:
		if (!strcmp(value, "warm")) cfg->isolation = SB_ISOLATION_WARM;
		else if (!strcmp(value, "fresh")) cfg->isolation = SB_ISOLATION_FRESH;
		else return bad(err, s, origin, value, NULL);
		return 0;
	case K_IMAGE:
		/* The seed silently fell back to its default here; we refuse, so a
		 * value like "--privileged" can never become a podman flag. */
		if (!*value || value[0] == '-' || has_control_or_space(value))
			return bad(err, s, origin, value,
				   "must not be empty, start with '-', or contain spaces or control characters");
		break;
	case K_NAME:
		if (!*value || value[0] == '-' || has_control_or_space(value) || strchr(value, ':'))
			return bad(err, s, origin, value, "must be a plain user name or uid");
		break;
	case K_PATH:
		if (has_control_or_space(value) && strcmp(key, "audit_log"))
			return bad(err, s, origin, value, "contains spaces or control characters");
		if (value[0] == '-')
			return bad(err, s, origin, value, "must not start with '-'");
		if (!*value && strcmp(key, "audit_log"))
			return bad(err, s, origin, value, "must not be empty");
		if ((!strcmp(key, "sage") || !strcmp(key, "python") || !strcmp(key, "shell")) && value[0] != '/')
			return bad(err, s, origin, value, "must be an absolute path inside the sandbox");
		break;
	}
	if (strlen(value) >= s->size)
		return bad(err, s, origin, value, "too long");
	snprintf(field, s->size, "%s", value);
	if (s->offset == offsetof(struct sb_config, python))
		cfg->python_set = true;
	else if (s->offset == offsetof(struct sb_config, sage))
		cfg->sage_set = true;
	return 0;
}

struct ini_ctx {
	struct sb_config *cfg;
	const char *path;
	struct sb_error *err;
	FILE *f;
	int lineno; /* Debian's inih passes no line number: count them here */
	int failed;
};

static char *read_counting_lines(char *str, int num, void *stream)
{
	struct ini_ctx *c = stream;
	char *r = fgets(str, num, c->f);
	if (r)
		c->lineno++;
	return r;
}

static int on_setting(void *user, const char *section, const char *name, const char *value)
{
	struct ini_ctx *c = user;
	if (c->failed)
		return 0;
	char origin[PATH_MAX + 32];
	snprintf(origin, sizeof origin, "%s:%d", c->path, c->lineno);
	if (*section && strcmp(section, "sagebox")) {
		sb_fail(c->err, "%s: unknown section [%s]", origin, section);
		sb_hint(c->err, "put settings at the top of the file or under [sagebox]");
		c->failed = 1;
		return 0;
	}
	if (sb_config_set(c->cfg, name, value, origin, c->err)) {
		c->failed = 1;
		return 0;
	}
	return 1;
}

static int load_file(struct sb_config *cfg, const char *path, bool must_exist, struct sb_error *err)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		if (!must_exist && errno == ENOENT)
			return 0;
		return sb_fail_errno(err, "cannot read config file %s", path);
	}
	snprintf(cfg->config_path, sizeof cfg->config_path, "%s", path);
	struct ini_ctx c = {cfg, path, err, f, 0, 0};
	int rc = ini_parse_stream(read_counting_lines, &c, on_setting, &c);
	fclose(f);
	if (c.failed)
		return -1;
	if (rc > 0) {
		sb_fail(err, "%s:%d: malformed line", path, rc);
		return sb_hint(err, "each line is 'key = value', '[sagebox]', or a '#' or ';' comment");
	}
	if (rc < 0)
		return sb_fail(err, "%s: cannot parse config file", path);
	return 0;
}

static const char *env_get(char *const envp[], const char *name)
{
	size_t n = strlen(name);
	for (char *const *e = envp; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

int sb_config_load(struct sb_config *cfg, const char *path, char *const envp[], struct sb_error *err)
{
	sb_config_defaults(cfg);
	const char *env_path = env_get(envp, "SAGEBOX_CONFIG");
	if (path || env_path) {
		if (load_file(cfg, path ? path : env_path, true, err))
			return -1;
	} else {
		char def[PATH_MAX];
		const char *xdg = env_get(envp, "XDG_CONFIG_HOME");
		const char *home = env_get(envp, "HOME");
		if (xdg && *xdg == '/')
			snprintf(def, sizeof def, "%s/sagebox/config.ini", xdg);
		else if (home && *home == '/')
			snprintf(def, sizeof def, "%s/.config/sagebox/config.ini", home);
		else
			def[0] = '\0';
		if (def[0] && load_file(cfg, def, false, err))
			return -1;
	}
	for (size_t i = 0; i < N_SETTINGS; i++) {
		char var[64];
		snprintf(var, sizeof var, "SAGEBOX_");
		for (size_t j = 0; settings[i].key[j] && j + 9 < sizeof var; j++) {
			var[8 + j] = (char)toupper((unsigned char)settings[i].key[j]);
			var[9 + j] = '\0';
		}
		const char *v = env_get(envp, var);
		if (v && sb_config_set(cfg, settings[i].key, v, var, err))
			return -1;
	}
	return 0;
}

const char *sb_config_key_for_flag(const char *flag)
{
	if (strncmp(flag, "--", 2))
		return NULL;
	flag += 2;
	for (size_t i = 0; i < N_SETTINGS; i++) {
		const char *k = settings[i].key;
		size_t j = 0;
		for (; k[j] && flag[j]; j++)
			if (!(k[j] == flag[j] || (k[j] == '_' && flag[j] == '-')))
				break;
		if (!k[j] && !flag[j])
			return k;
	}
	return NULL;
}

bool sb_config_is_switch(const char *key)
{
	const struct setting *s = find(key);
	return s && s->kind == K_BOOL;
}

void sb_config_print_help(FILE *out)
{
	struct sb_config d;
	sb_config_defaults(&d);
	json_t *dj = sb_config_to_json(&d);
	fprintf(out, "Settings (config file key / SAGEBOX_ variable / --flag), lowest to highest precedence:\n"
		     "  $XDG_CONFIG_HOME/sagebox/config.ini (or SAGEBOX_CONFIG, --config), SAGEBOX_*, flags.\n\n");
	for (size_t i = 0; i < N_SETTINGS; i++) {
		char flag[64], var[64];
		size_t j;
		for (j = 0; settings[i].key[j] && j < 60; j++) {
			flag[j] = settings[i].key[j] == '_' ? '-' : settings[i].key[j];
			var[j] = (char)toupper((unsigned char)settings[i].key[j]);
		}
		flag[j] = var[j] = '\0';
		/* The host name is this machine's, not the program's default. */
		json_t *v = settings[i].kind == K_INSTANCE ? NULL : json_object_get(dj, settings[i].key);
		char *dv = v ? json_dumps(v, JSON_ENCODE_ANY) : settings[i].kind == K_INSTANCE ? strdup("\"\"") : NULL;
		fprintf(out, "  %-19s --%-19s SAGEBOX_%s\n      %s; allowed: %s; default: %s\n", settings[i].key,
			flag, var, settings[i].help, range_of(&settings[i]), dv ? dv : "?");
		free(dv);
	}
	json_decref(dj);
}

static json_t *base_json(const struct sb_config *c)
{
	return json_pack("{s:s, s:s, s:I, s:s, s:f, s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:s?}",
			 "backend", c->backend, "isolation", sb_isolation_name(c->isolation),
			 "timeout", (json_int_t)c->limits.timeout_s, "memory", c->limits.memory, "cpus",
			 c->limits.cpus, "pids", (json_int_t)c->limits.pids, "output_limit_kib",
			 (json_int_t)(c->limits.output_bytes / 1024), "sage", c->sage, "python", c->python, "shell",
			 c->shell, "podman", c->podman, "image", c->image, "container_user", c->container_user,
			 "sandbox_user", c->sandbox_user, "audit_log", c->audit_log, "pool_size",
			 (json_int_t)c->pool_size, "worker_max_jobs", (json_int_t)c->worker_max_jobs,
			 "worker_max_minutes", (json_int_t)c->worker_max_minutes, "max_concurrent",
			 (json_int_t)c->max_concurrent, "config_file", c->config_path[0] ? c->config_path : NULL);
}

json_t *sb_config_to_json(const struct sb_config *c)
{
	json_t *o = base_json(c);
	json_t *shares = json_array();
	for (unsigned i = 0; i < c->n_shares; i++)
		json_array_append_new(shares, json_string(c->shares[i]));
	json_object_update_new(o, json_pack("{s:b, s:I, s:s, s:I}", "service", c->service, "service_idle_seconds",
					    (json_int_t)c->service_idle_s, "instance", sb_config_instance(c), "drain_timeout",
					    (json_int_t)c->drain_timeout_s));
	json_object_set_new(o, "metrics_by_client", json_boolean(c->metrics_by_client));
	json_object_update_new(o, json_pack("{s:I, s:I, s:I, s:s, s:I, s:I, s:I, s:I, s:o, s:s, s:s}", "max_sessions",
					    (json_int_t)c->max_sessions, "max_sessions_total",
					    (json_int_t)c->max_sessions_total, "session_idle_minutes",
					    (json_int_t)c->session_idle_minutes, "workspace_size", c->workspace_size,
					    "job_timeout", (json_int_t)c->job_timeout_s, "max_jobs", (json_int_t)c->max_jobs,
					    "max_jobs_total", (json_int_t)c->max_jobs_total, "task_ttl",
					    (json_int_t)c->task_ttl_s, "share", shares, "export_dir",
					    c->export_dir, "network", c->network));
	json_object_update_new(o, json_pack("{s:s, s:s, s:b}", "workspaces_total", c->workspaces_total, "project_dir",
					    c->project_dir, "project_exec", c->project_exec));
	return o;
}
