/* For the C tests of sessions (tests/native): run Python code in a session
 * as its owner would through the session tools. */
#ifndef SAGEBOX_TEST_SESSION_RUN_H
#define SAGEBOX_TEST_SESSION_RUN_H

#include <stdio.h>
#include <string.h>

#include "runner/sessions/sessions.h"

static inline struct sb_job job_of(const char *code)
{
	struct sb_job j = {0};
	j.lang = SB_LANG_PYTHON;
	j.code = code;
	j.code_len = strlen(code);
	j.limits.timeout_s = 30;
	j.limits.output_bytes = 4096;
	return j;
}

/* Run code in session id as owner; 0 with its stdout in out, or -1 with err. */
static inline int run_as(struct sb_sessions *ss, const char *owner, const char *id, const char *code, char *out,
			 size_t n, struct sb_error *err)
{
	struct sb_job j = job_of(code);
	struct sb_result res;
	sb_result_init(&res);
	struct sb_session_verdict v = {0};
	if (sb_session_run(ss, owner, id, &j, NULL, &res, &v, err))
		return -1;
	snprintf(out, n, "%s", res.out.data ? res.out.data : "");
	sb_result_free(&res);
	return 0;
}

#endif
