/* Settings: built-in defaults, then $XDG_CONFIG_HOME/sagebox/config.ini,
 * then SAGEBOX_* environment variables, then command-line flags. Every
 * setting is one row of a table (config.c), so the file key, the variable,
 * the flag, the validation and the help text cannot drift apart. Bad values
 * are errors naming where they came from and the allowed range; nothing is
 * silently clamped. */
#ifndef SAGEBOX_CONFIG_H
#define SAGEBOX_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "core/handle.h"
#include "core/limits.h"
#include "core/paths.h"
#include "config/netlist.h"
#include "util/error.h"

enum sb_isolation { SB_ISOLATION_WARM, SB_ISOLATION_FRESH };

struct sb_config {
	struct sb_limits limits;       /* defaults for each job; timeout = default timeout */
	char backend[16];              /* "auto" or a name of the backend registry */
	enum sb_isolation isolation;
	char sage[PATH_MAX];           /* the sage executable (inside the sandbox) */
	char python[PATH_MAX];         /* python3 with Sage's modules (inside the sandbox) */
	bool sage_set, python_set;     /* given explicitly: else runner/sage/locate.c asks Sage */
	char shell[PATH_MAX];          /* shell for shell jobs (inside the sandbox) */
	char podman[PATH_MAX];         /* podman (or docker) executable on the host */
	char image[512];               /* container image */
	char container_user[64];       /* user inside the container */
	char sandbox_user[64];         /* host user to drop to when started as root */
	char audit_log[PATH_MAX];      /* JSON-lines audit log; empty: off */
	unsigned pool_size;            /* warm workers per language */
	unsigned worker_max_jobs;      /* recycle a worker after this many jobs */
	unsigned worker_max_minutes;   /* ... or after this many minutes */
	unsigned max_concurrent;       /* jobs running at once */
	/* Sessions and background jobs. */
	unsigned max_sessions;         /* open sessions per client; 0: sessions off */
	unsigned max_sessions_total;   /* open sessions of all clients together (HTTP) */
	unsigned session_idle_minutes; /* a session unused this long is closed */
	char workspace_size[16];       /* a session's /work tmpfs, "256m" */
	uint64_t workspace_bytes;      /* the same, in bytes */
	/* Named workspaces kept on disk (src/workspaces/): what one client's
	 * may take together. */
	char workspaces_total[16];
	uint64_t workspaces_total_bytes;
	/* The user's project folder: bound read-write at SB_PROJECT_MOUNT in
	 * the local user's sessions (resolved); "" none. project_exec: its
	 * files may be executed (mounted without noexec). */
	char project_dir[PATH_MAX];
	bool project_exec;
	unsigned job_timeout_s;        /* the longest a background job may run */
	unsigned max_jobs;             /* running background jobs per client; 0: jobs off */
	unsigned max_jobs_total;       /* running background jobs of all clients together */
	unsigned task_ttl_s;           /* the longest an MCP task (and its result) is kept */
	char share[1024];              /* the setting as given (comma-separated), "" none */
	char shares[SB_SHARES_MAX][PATH_MAX]; /* ... each resolved (realpath) */
	unsigned n_shares;
	char network[1024];            /* the allow-list, normalised, or "none" */
	struct sb_netlist net;         /* ... parsed; net.n == 0: no network */
	char export_dir[PATH_MAX];     /* file_export copies here (resolved); "" off */
	char config_path[PATH_MAX];    /* the file that was read, or empty */
	bool service;                  /* sagebox mcp: use the user-level service (cli/service_front.c) */
	/* Not a setting: the clients are HTTP tokens (sagebox mcp --http),
	 * not the local user. Their workspaces are kept apart by token, and
	 * project_dir, the local user's own folder, is never bound for them. */
	bool http_clients;
	unsigned service_idle_s;       /* the service exits after this long unused */
	/* Many instances behind a router (docs/DEPLOY.md). */
	char instance[SB_INSTANCE_MAX + 1]; /* named in every handle; "" the host name */
	unsigned drain_timeout_s;      /* SIGTERM or --drain: the longest open work is waited for */
	bool metrics_by_client;        /* label sessions' and jobs' gauges by the client's (token's) name */
};

/* Defaults only. */
void sb_config_defaults(struct sb_config *cfg);

/* Defaults, then the config file (path, or the XDG default when NULL; a
 * missing default file is fine, a missing named file is an error), then the
 * SAGEBOX_* variables of envp. */
int sb_config_load(struct sb_config *cfg, const char *path, char *const envp[], struct sb_error *err);

/* Set one setting by its file key ("timeout", "memory", ...). `origin` names
 * where the value came from ("--timeout", "SAGEBOX_TIMEOUT",
 * "/home/u/.config/sagebox/config.ini:3") for the error message. */
int sb_config_set(struct sb_config *cfg, const char *key, const char *value, const char *origin,
		  struct sb_error *err);

/* Map a command-line flag ("--timeout") to its setting key, or NULL. */
const char *sb_config_key_for_flag(const char *flag);

/* Whether key is an on/off setting: its flag alone ("--service") means true. */
bool sb_config_is_switch(const char *key);

/* Print every setting: key, flag, variable, allowed values, default. */
void sb_config_print_help(FILE *out);

#include <jansson.h>
/* The active settings, for status output. */
json_t *sb_config_to_json(const struct sb_config *cfg);

const char *sb_isolation_name(enum sb_isolation i);

/* The instance this server is: the setting, or the host name when it is
 * empty (core/handle.h). */
const char *sb_config_instance(const struct sb_config *cfg);

#endif
