/* What runs inside the sandbox for a job: the embedded driver, started by
 * the sandbox's python, speaking the worker protocol (docs/WARM.md) on its
 * stdin and stdout. */
#ifndef SAGEBOX_COMMAND_H
#define SAGEBOX_COMMAND_H

#include <stdbool.h>

#include "config/config.h"
#include "core/job.h"

extern const char sb_driver_py[];

/* argv for a worker of the given kind ("sage" or "python") in a fresh
 * sandbox: it runs one job, then exits (static storage except the config's
 * strings; valid while cfg lives). out must hold 12 entries. */
void sb_command_fresh(const struct sb_config *cfg, const char *kind, bool own_pidns, const char *argv_out[12]);

/* argv for a warm worker of the given kind ("sage" or "python"). own_pidns:
 * the sandbox has its own pid namespace (every backend but host), so the
 * worker may kill every other process in it between jobs. warm_mib: memory
 * the worker may use for itself (its warm-ups stop short of it). out must
 * hold 12 entries; the strings must outlive the argv. */
void sb_command_worker(const struct sb_config *cfg, const char *kind, bool own_pidns, const char *warm_mib,
		       const char *argv_out[12]);

/* argv for a session's sandbox (the driver's session controller, which
 * starts the session's interpreter: lang's). workspace: the session's
 * working directory inside ("/work"), or "-" for the command's own (the
 * host backend). limits_json: the job limits the interpreter applies to
 * itself. out must hold 12 entries; the strings must outlive the argv. */
void sb_command_session(const struct sb_config *cfg, enum sb_lang lang, bool own_pidns, const char *workspace,
			const char *limits_json, const char *argv_out[12]);

#endif
