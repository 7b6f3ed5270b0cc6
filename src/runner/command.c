#include "runner/command.h"

void sb_command_once(const struct sb_config *cfg, enum sb_lang lang, const char *argv[8])
{
	int i = 0;
	argv[i++] = cfg->python;
	/* -I: no user site-packages, no PYTHON* variables, no script dir on
	 * sys.path, so nothing planted in the work dir is imported by accident. */
	argv[i++] = "-I";
	argv[i++] = "-c";
	argv[i++] = sb_driver_py;
	argv[i++] = "once";
	argv[i++] = sb_lang_name(lang);
	if (lang == SB_LANG_SHELL)
		argv[i++] = cfg->shell;
	argv[i] = NULL;
}

void sb_command_worker(const struct sb_config *cfg, const char *kind, bool own_pidns, const char *warm_mib,
		       const char *argv[12])
{
	int i = 0;
	argv[i++] = cfg->python;
	argv[i++] = "-I"; /* as above: nothing from the work dir or environment */
	argv[i++] = "-c";
	argv[i++] = sb_driver_py;
	argv[i++] = "worker";
	argv[i++] = kind;
	argv[i++] = cfg->shell;
	argv[i++] = own_pidns ? "1" : "0";
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
