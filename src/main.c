/* sagebox: SageMath, Python and a shell for language models, in a sandbox. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "core/exit_status.h"
#include "cli/cli.h"
#include "config/config.h"

#ifndef SAGEBOX_VERSION
#define SAGEBOX_VERSION "0.1.0"
#endif

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sagebox COMMAND [OPTIONS]\n"
		"\n"
		"Run code a language model wrote (SageMath, Python, shell) in a hardened sandbox.\n"
		"\n"
		"commands:\n"
		"  run [--lang sage|python|shell] [--json] FILE|-   run code in a new sandbox\n"
		"  status [--json]                 can this machine run the sandbox? what is enforced?\n"
		"  self-test [--json]              the seed's self-test plus checks from inside the sandbox\n"
		"  mcp                             serve the Model Context Protocol on stdin/stdout\n"
		"  image build [--tag TAG]         build a Sage container image from Debian packages\n"
		"  policy [--json]                 the system calls the sandbox refuses, and why\n"
		"  proxy --listen SOCKET           the network proxy alone, with the network setting\n"
		"  packages add|list|remove NAME   Python packages (wheels) for every sandbox, via the proxy\n"
		"  workspaces list|show|rm|export|import   the named workspaces sessions keep on disk\n"
		"\n"
		"  sagebox COMMAND --help          help for one command\n"
		"  sagebox --help-settings         every setting, its flag, variable and allowed values\n"
		"  sagebox --version\n");
}

int main(int argc, char **argv)
{
	/* A sandbox that exits early must not kill us through a pipe write. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return SB_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("sagebox %s\n", SAGEBOX_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "--help-settings")) {
		sb_config_print_help(stdout);
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return sb_cli_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "policy"))
		return sb_cli_policy(argc - 1, argv + 1);
	if (!strcmp(cmd, "status"))
		return sb_cli_status(argc - 1, argv + 1);
	if (!strcmp(cmd, "self-test"))
		return sb_cli_self_test(argc - 1, argv + 1);
	if (!strcmp(cmd, "mcp"))
		return sb_cli_mcp(argc - 1, argv + 1);
	if (!strcmp(cmd, "proxy"))
		return sb_cli_proxy(argc - 1, argv + 1);
	if (!strcmp(cmd, "packages"))
		return sb_cli_packages(argc - 1, argv + 1);
	if (!strcmp(cmd, "workspaces"))
		return sb_cli_workspaces(argc - 1, argv + 1);
	if (!strcmp(cmd, "image"))
		return sb_cli_image(argc - 1, argv + 1);
	fprintf(stderr, "sagebox: unknown command '%s'\n\n", cmd);
	usage(stderr);
	return SB_EXIT_USAGE;
}
