/* A job: code in one language with its limits. What the tools layer hands the
 * runner; it knows nothing of how or where the code runs. */
#ifndef SAGEBOX_JOB_H
#define SAGEBOX_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include "core/limits.h"

enum sb_lang { SB_LANG_SAGE, SB_LANG_PYTHON, SB_LANG_SHELL };

struct sb_job {
	enum sb_lang lang;
	const char *code;     /* not necessarily NUL-free; code_len counts bytes */
	size_t code_len;
	struct sb_limits limits;
};

const char *sb_lang_name(enum sb_lang lang);
/* "sage"|"python"|"shell" (also "sh", "bash", "py") -> 0 and *out; else -1. */
int sb_lang_parse(const char *s, enum sb_lang *out);
/* From a file name's extension (.sage .py .sh .bash); sage when unknown. */
enum sb_lang sb_lang_from_path(const char *path);

#endif
