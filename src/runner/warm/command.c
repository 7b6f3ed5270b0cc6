#include "runner/warm/command.h"

/* The driver in mode, for workers of kind; returns the next free slot. */
static int driver(const struct sb_config *cfg, const char *mode, const char *kind, bool own_pidns,
		  const char *argv[12])
{
	int i = 0;
	argv[i++] = cfg->python;
	/* -I: no user site-packages, no PYTHON* variables, no script dir on
	 * sys.path, so nothing planted in the work dir is imported by accident. */
	argv[i++] = "-I";
	argv[i++] = "-c";
	argv[i++] = sb_driver_py;
	argv[i++] = mode;
	argv[i++] = kind;
	argv[i++] = cfg->shell;
	argv[i++] = own_pidns ? "1" : "0";
	return i;
}

void sb_command_fresh(const struct sb_config *cfg, const char *kind, bool own_pidns, const char *argv[12])
{
	argv[driver(cfg, "fresh", kind, own_pidns, argv)] = NULL;
}

void sb_command_worker(const struct sb_config *cfg, const char *kind, bool own_pidns, const char *warm_mib,
		       const char *argv[12])
{
	int i = driver(cfg, "worker", kind, own_pidns, argv);
	argv[i++] = warm_mib;
	argv[i] = NULL;
}

void sb_command_session(const struct sb_config *cfg, enum sb_lang lang, bool own_pidns, const char *workspace,
			const char *limits_json, const char *argv[12])
{
	int i = 0;
	argv[i++] = cfg->python;
	argv[i++] = "-I"; /* as above */
	argv[i++] = "-c";
	argv[i++] = sb_driver_py;
	argv[i++] = "session";
	argv[i++] = sb_lang_name(lang);
	argv[i++] = cfg->shell;
	argv[i++] = own_pidns ? "1" : "0";
	argv[i++] = workspace;
	argv[i++] = limits_json;
	argv[i] = NULL;
}
