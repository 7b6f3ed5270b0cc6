/* Fuzz target: the status and self-test texts (tools/status_text.c,
 * status_backends.c, self_test_text.c) from any JSON. The self-test's
 * checks are what the probe printed inside the sandbox, and a worker's
 * ready frame reaches the status, so the reports are not all sagebox's own
 * words. Checked: both forms of both texts exist and are UTF-8 (the tool
 * hands them to a model as JSON strings). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/report_text.h"
#include "util/utf8.h"

static void check(char *text)
{
	if (!text || !sb_utf8_valid(text, strlen(text), NULL))
		abort();
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t e;
	json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY, &e);
	if (!j)
		return 0;
	check(sb_status_text(j, SB_REPORT_FULL));
	check(sb_status_text(j, SB_REPORT_BRIEF));
	check(sb_self_test_text(j, SB_REPORT_FULL));
	check(sb_self_test_text(j, SB_REPORT_BRIEF));
	json_decref(j);
	return 0;
}
