/* One interface, several backends. A backend starts a command inside a
 * sandbox with its stdin/stdout/stderr on pipes, can kill everything in it,
 * and says what it really enforces. It knows nothing of jobs, languages, MCP
 * or output caps: those belong to the runner above it.
 *
 * A backend is a row of the registry (registry.c: name, capabilities,
 * operations). The runner opens one instance of it with the settings it
 * needs (struct sb_backend_settings, given once), then asks it to spawn
 * sandboxes from narrow requests (argv, limits, lifetime). */
#ifndef SAGEBOX_SANDBOX_H
#define SAGEBOX_SANDBOX_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/limits.h"
#include "core/paths.h"
#include "util/error.h"

/* One spawn: what to run, within which limits, for how long at most. */
struct sb_sandbox_req {
	const char *const *argv;        /* argv[0]: absolute path inside the sandbox */
	const struct sb_limits *limits; /* enforced by the backend, as far as it can */
	/* The sandbox is killed at this age even if its caller is gone (a
	 * backstop; the runner keeps its own, shorter deadlines). 0: none. */
	unsigned lifetime_s;
	/* A session's sandbox: a writable tmpfs of this many bytes at
	 * SB_SANDBOX_WORKSPACE, which is then the command's working directory
	 * (backends that isolate nothing ignore it). 0: none. */
	uint64_t workspace_bytes;
	/* A session's sandbox (workspace_bytes set): the user's project
	 * folder, a host directory bound read-write at SB_PROJECT_MOUNT,
	 * nosuid, nodev and (unless project_exec) noexec, where the code makes
	 * no symlink, FIFO, socket or device node (native: Landlock; the
	 * driver adds a Landlock domain of its own to the session's code on
	 * every backend) and its .git, if any, is read-only. NULL: none. */
	const char *project_dir;
	bool project_exec;
	/* The command is a warm worker that moves each job's process into a
	 * cgroup of its own when the environment names one
	 * (SAGEBOX_JOB_CGROUP_FD): the `cpus` limit is then on each job, and
	 * the sandbox as a whole gets a little more for the worker's own work
	 * (the backend says so in `enforced`). Backends that cannot ignore it
	 * and hold the whole sandbox to `cpus`. Never for a command that runs
	 * code itself: its code would get the larger share. */
	bool cpu_per_job;
	/* A session's sandbox: this many cgroups for its background jobs,
	 * which its controller moves each job into (SAGEBOX_JOB_SLOTS_FD) so
	 * that job_cancel finds every process of the job however it detached.
	 * Backends without delegated cgroups ignore it (the controller then
	 * tracks a job by its process tree). 0: none. */
	unsigned job_slots;
	/* network set: a host directory holding this sandbox's own
	 * proxy socket (net/spawn.h), bound read-only at SB_NET_MOUNT, and the
	 * proxy variables (sb_sandbox_proxy_env) in the command's
	 * environment. NULL: no network, nothing of it. */
	const char *net_dir;
	/* The driver's precompiled code (runner/warm/driver_code.h): a host file
	 * the command's driver may read (native: bound read-only at
	 * SB_DRIVER_CODE_MOUNT; host: its path), named to it by
	 * SAGEBOX_DRIVER_CODE. Backends whose Python is not the host's ignore
	 * it. NULL: none. */
	const char *driver_code;
};

struct sb_exit {
	int exit_code; /* -1 when killed by a signal */
	int signal;    /* 0 when it exited */
};

struct sb_backend;

struct sb_sandbox {
	const struct sb_backend *backend;
	pid_t pid;       /* host process the backend waits on */
	int stdin_fd;    /* host ends of the pipes, O_CLOEXEC, owned by the caller */
	int stdout_fd;
	int stderr_fd;
	json_t *enforced; /* what this sandbox enforces, verified at spawn (owned) */
	void *priv;       /* backend state */
};

/* The settings a backend instance is opened with: only what backends read,
 * copied by the instance (the config may go away). */
struct sb_backend_settings {
	struct sb_limits limits;       /* a job's default limits (status reports them) */
	const char *sandbox_user;      /* native, started as root: host user to drop to */
	const char *engine;            /* podman/docker: the executable ("podman": the default) */
	const char *image;             /* podman/docker: the image */
	const char *container_user;    /* podman/docker: the user inside */
	/* Host directories bound read-only at SB_SHARE_MOUNT/<last component>
	 * in every sandbox (resolved, existing; config's `share`). */
	const char (*shares)[PATH_MAX];
	unsigned n_shares;
	/* The user's package presets (packages/packages.h): a host directory
	 * bound read-only at SB_PACKAGES_MOUNT in every sandbox; "": none. */
	char packages[PATH_MAX];
	unsigned max_sandboxes;        /* how many may run at once: warm workers, jobs, sessions */
	/* Executables the runner starts inside the sandbox (status checks
	 * they exist): {name, path} pairs, name NULL at the end. */
	struct {
		const char *name, *path;
	} commands[4];
};

/* Capabilities: what callers ask a backend instead of comparing names. */
enum sb_backend_cap {
	SB_CAP_ISOLATED = 1u << 0,   /* the code is confined (all but host) */
	SB_CAP_OWN_PIDNS = 1u << 1,  /* own pid namespace: killing every other
					process in it harms nothing outside */
	SB_CAP_POLICY = 1u << 2,     /* applies the syscall policy (policy.c) */
	SB_CAP_IMAGES = 1u << 3,     /* runs a container image: has image ops */
	SB_CAP_HOST_FILES = 1u << 4, /* runs the host's own programs (native, host):
					Sage is found by asking the host's sage */
	SB_CAP_PROJECT = 1u << 5,    /* binds a session's project folder (req->project_dir)
					with the code's files owned by the user */
};

/* Building the container image a backend runs (podman/docker). */
struct sb_image_recipe {
	const char *tag;                 /* the image name to create */
	const char *suite;               /* Debian release, e.g. bookworm */
	const char *const *apt_sources;  /* "deb URI SUITE main" lines, NULL-terminated */
	const char *const *apt_extra;    /* more Debian packages (--apt), NULL-terminated; NULL: none */
	bool dry_run;                    /* print the commands, run nothing */
};

struct sb_backend_ops {
	/* An instance with these settings (copied). NULL with err filled. */
	void *(*open)(const struct sb_backend_settings *s, struct sb_error *err);
	void (*close)(void *self);
	/* Can this machine run the backend, and what would it enforce? Never
	 * runs user code. Returns a new JSON object with at least
	 * {"available": bool} and, when unavailable, "error" and "hint". */
	json_t *(*status)(void *self);
	/* Start req->argv in a new sandbox. On failure returns -1 with err
	 * filled (message says what is missing, hint says how to fix it). */
	int (*spawn)(void *self, const struct sb_sandbox_req *req, struct sb_sandbox *sb, struct sb_error *err);
	/* Kill every process in the sandbox, not only the first: a
	 * double-forked, setsid'd grandchild must die too. Idempotent; safe
	 * after exit. */
	void (*kill)(struct sb_sandbox *sb);
	/* Wait until the sandbox's command is finished and every process of
	 * the sandbox is gone; release backend resources (cgroups,
	 * containers). Fills *ex with the command's own status or signal. */
	int (*wait)(struct sb_sandbox *sb, struct sb_exit *ex, struct sb_error *err);
	/* How many of the sandbox's processes the kernel has killed for memory
	 * so far (its memory cgroup's oom_kill counter); -1 when it cannot
	 * tell. Valid until wait (which removes the cgroup). NULL: never. */
	long (*oom_kills)(const struct sb_sandbox *sb);
	/* SB_CAP_IMAGES only: build an image from Debian packages. Prints
	 * progress on stderr; returns an exit status (core/exit_status.h). */
	int (*image_build)(void *self, const struct sb_image_recipe *r);
	/* What Sage's Python depends on besides the sage path, for the cache
	 * of runner/sage/locate.c (podman/docker: the image's ID). NULL: nothing. */
	int (*locate_key)(void *self, char *key, size_t n, struct sb_error *err);
	/* Make an installation found on the host (its directories, absolute,
	 * NULL-terminated) visible read-only at the same paths in every later
	 * sandbox; appends to `said` one object per path {path, bind: "bound",
	 * "visible" (already) or "refused", why}. A refused path fails the call
	 * when `required`. NULL: the backend needs nothing. */
	int (*bind_install)(void *self, const char *const *paths, bool required, json_t *said, struct sb_error *err);
	/* Put dir (absolute, inside an installation bind_install bound) first
	 * on the PATH of every later sandbox, so that shell jobs and !cmd find
	 * that Sage's `sage` and `python3`. 1 added, 0 not needed or not
	 * visible inside. NULL: the backend needs nothing. */
	int (*add_path)(void *self, const char *dir);
};

/* One row of the registry. */
struct sb_backend_type {
	const char *name;    /* the `backend` setting's value */
	const char *summary; /* one line, for help and status */
	unsigned caps;       /* enum sb_backend_cap */
	const struct sb_backend_ops *ops;
};

/* An open backend. */
struct sb_backend {
	const struct sb_backend_type *type;
	void *self;
	unsigned max_sandboxes; /* at once, from the settings (status's arithmetic) */
};

/* ---- sandbox.c ---- */

/* Open the backend of a registry row with these settings (the runner
 * fills them: runner/backend.h; by name: sandbox/registry.h). Returns NULL
 * with err filled when it cannot be opened. Free with sb_backend_close. */
struct sb_backend *sb_backend_open_type(const struct sb_backend_type *t, const struct sb_backend_settings *s,
					struct sb_error *err);
void sb_backend_close(struct sb_backend *be);
static inline bool sb_backend_has(const struct sb_backend *be, enum sb_backend_cap cap)
{
	return be && (be->type->caps & cap);
}
static inline const char *sb_backend_name(const struct sb_backend *be)
{
	return be->type->name;
}
json_t *sb_backend_status(const struct sb_backend *be);
int sb_backend_spawn(const struct sb_backend *be, const struct sb_sandbox_req *req, struct sb_sandbox *sb,
		     struct sb_error *err);
void sb_backend_kill(struct sb_sandbox *sb);
int sb_backend_wait(struct sb_sandbox *sb, struct sb_exit *ex, struct sb_error *err);
/* ops->oom_kills, or -1 when the backend cannot tell. */
long sb_backend_oom_kills(const struct sb_sandbox *sb);

/* The environment every sandboxed command gets, and nothing else: no host
 * variable (API keys, tokens) is ever passed through. NULL-terminated,
 * static storage. */
const char *const *sb_sandbox_env(void);
/* What a sandbox with network (req->net_dir) gets on top: the proxy
 * variables, upper and lower case, for the relay on 127.0.0.1:SB_NET_PORT,
 * and SAGEBOX_NET_SOCKET naming its socket for the driver's relay. */
const char *const *sb_sandbox_proxy_env(void);

/* Close the caller's pipe ends in sb (not the processes). */
void sb_sandbox_close_fds(struct sb_sandbox *sb);

#endif
