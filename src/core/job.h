/* A job: code in one language with its limits, and where it runs: on its
 * own (a fresh start), in a session, or in the background. What the tools
 * layer hands the runner (sb_runner_run, its one entry); it knows nothing
 * of how the code runs. */
#ifndef SAGEBOX_JOB_H
#define SAGEBOX_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include "core/limits.h"

enum sb_lang { SB_LANG_SAGE, SB_LANG_PYTHON, SB_LANG_SHELL };

enum sb_job_kind {
	SB_JOB_STATELESS,  /* a call of its own: nothing kept (warm or fresh) */
	SB_JOB_SESSION,    /* a call in the session `session` of `owner` */
	SB_JOB_BACKGROUND, /* a background job: in `session`, or (NULL) a sandbox of its own */
};

struct sb_job {
	enum sb_job_kind kind;
	const char *owner;    /* SESSION, BACKGROUND: whose sessions and jobs */
	const char *session;  /* SESSION: the session's id; BACKGROUND: NULL or one */
	enum sb_lang lang;
	/* SESSION: run the session's interact of this id again instead of code
	 * (core/interact.h); code is then the values, a JSON object. NULL: none. */
	const char *interact;
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
