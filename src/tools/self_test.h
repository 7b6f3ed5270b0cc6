/* The seed's self-test (factor x^4 - 1 in the same sandbox as run_sagemath)
 * plus checks of the sandbox made from inside it, by code running there. */
#ifndef SAGEBOX_SELF_TEST_H
#define SAGEBOX_SELF_TEST_H

#include <jansson.h>

#include "runner/runner.h"

/* Returns {"ok": bool, "backend": "...", "factor": {result object},
 * "checks": [{"name", "ok", "detail"}...]} (new reference). */
json_t *sb_self_test(struct sb_runner *r);

#endif
