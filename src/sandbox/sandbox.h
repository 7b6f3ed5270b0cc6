/* One interface, several backends. A backend starts a command inside a
 * sandbox with its stdin/stdout/stderr on pipes, can kill everything in it,
 * and says what it really enforces. It knows nothing of jobs, languages, MCP
 * or output caps: those belong to the runner above it. */
#ifndef SAGEBOX_SANDBOX_H
#define SAGEBOX_SANDBOX_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "config/config.h"
#include "core/limits.h"
#include "util/error.h"

/* The working directory inside every sandbox (on the size-limited tmpfs). */
#define SB_SANDBOX_WORKDIR "/tmp/work"

struct sb_sandbox_req {
	const char *const *argv;        /* argv[0]: absolute path inside the sandbox */
	const struct sb_limits *limits; /* enforced by the backend, as far as it can */
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

struct sb_backend {
	const char *name; /* "native", "host", "podman", "docker" */
	/* Can this machine run the backend, and what would it enforce? Never runs
	 * user code. Returns a new JSON object with at least {"available": bool}
	 * and, when unavailable, "error" and "hint". */
	json_t *(*status)(const struct sb_config *cfg);
	/* Start req->argv in a new sandbox. On failure returns -1 with err filled
	 * (message says what is missing, hint says how to fix it). */
	int (*spawn)(const struct sb_config *cfg, const struct sb_sandbox_req *req,
		     struct sb_sandbox *sb, struct sb_error *err);
	/* Kill every process in the sandbox, not only the first: a double-forked,
	 * setsid'd grandchild must die too. Idempotent; safe after exit. */
	void (*kill)(struct sb_sandbox *sb);
	/* Wait until the sandbox's command is finished and every process of the
	 * sandbox is gone; release backend resources (cgroups, containers).
	 * Fills *ex with the command's own exit status or signal. */
	int (*wait)(struct sb_sandbox *sb, struct sb_exit *ex, struct sb_error *err);
};

extern const struct sb_backend sb_backend_native;
extern const struct sb_backend sb_backend_host;
/* Rootless Podman, and the same with the docker CLI (sandbox/podman/). */
extern const struct sb_backend sb_backend_podman;
extern const struct sb_backend sb_backend_docker;

/* The backend the configuration asks for; auto picks native on Linux.
 * Returns NULL with err filled when the named backend is not built in. */
const struct sb_backend *sb_backend_select(const struct sb_config *cfg, struct sb_error *err);

/* The environment every sandboxed command gets, and nothing else: no host
 * variable (API keys, tokens) is ever passed through. NULL-terminated,
 * static storage. */
const char *const *sb_sandbox_env(void);

/* Close the caller's pipe ends in sb (not the processes). */
void sb_sandbox_close_fds(struct sb_sandbox *sb);

#endif
