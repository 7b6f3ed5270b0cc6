#include "core/job.h"

#include <string.h>

const char *sb_lang_name(enum sb_lang lang)
{
	switch (lang) {
	case SB_LANG_SAGE: return "sage";
	case SB_LANG_PYTHON: return "python";
	case SB_LANG_SHELL: return "shell";
	}
	return "?";
}

int sb_lang_parse(const char *s, enum sb_lang *out)
{
	if (!strcmp(s, "sage")) *out = SB_LANG_SAGE;
	else if (!strcmp(s, "python") || !strcmp(s, "py") || !strcmp(s, "python3")) *out = SB_LANG_PYTHON;
	else if (!strcmp(s, "shell") || !strcmp(s, "sh") || !strcmp(s, "bash")) *out = SB_LANG_SHELL;
	else return -1;
	return 0;
}

enum sb_lang sb_lang_from_path(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	if (dot && !strchr(dot, '/')) {
		if (!strcmp(dot, ".py")) return SB_LANG_PYTHON;
		if (!strcmp(dot, ".sh") || !strcmp(dot, ".bash")) return SB_LANG_SHELL;
	}
	return SB_LANG_SAGE;
}
