/* `sagebox self-test` and the sandbox_self_test tool as text: the verdict
 * (did Sage run, do the checks from inside the sandbox hold), then the
 * failed checks with what was seen, then the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/report_text.h"

char *sb_self_test_text(const json_t *st, enum sb_report_form form)
{
	SB_AUTO_BUF failed = {0};
	SB_AUTO_BUF passed = {0};
	SB_AUTO_BUF na = {0};
	SB_AUTO_BUF names = {0};
	size_t n_fail = 0, n_pass = 0, i;
	json_t *c;
	json_array_foreach(json_object_get(st, "checks"), i, c) {
		const char *name = sb_report_str(c, "name") ? sb_report_str(c, "name") : "?";
		const char *detail = sb_report_str(c, "detail") ? sb_report_str(c, "detail") : "";
		json_t *ok = json_object_get(c, "ok");
		if (json_is_true(ok)) {
			sb_report_mark(&passed, "ok", "%s: %s", name, detail);
			n_pass++;
		} else if (json_is_null(ok)) {
			sb_report_mark(&na, "n/a", "%s: %s", name, detail);
		} else {
			sb_report_mark(&failed, "FAIL", "%s: %s", name, detail);
			sb_buf_printf(&names, "%s%s", n_fail ? ", " : "", name);
			n_fail++;
		}
	}

	SB_AUTO_BUF out = {0};
	const char *backend = sb_report_str(st, "backend");
	const char *error = sb_report_str(st, "error"), *hint = sb_report_str(st, "hint");
	const json_t *factor = json_object_get(st, "factor");
	const char *printed = sb_report_str(factor, "stdout");
	size_t inside = n_pass ? n_pass - 1 : 0; /* the first check is Sage's, the others the probe's */
	if (json_is_true(json_object_get(st, "ok")))
		sb_buf_printf(&out, "sagebox self-test: passed (%s backend): Sage printed %.*s, and %zu check%s of the "
				    "sandbox made from inside it hold%s.\n",
			      backend ? backend : "?", printed ? (int)strcspn(printed, "\n") : 0, printed ? printed : "",
			      inside, inside == 1 ? "" : "s", inside == 1 ? "s" : "");
	else if (error)
		sb_buf_printf(&out, "sagebox self-test: FAILED (%s backend): the sandbox could not run code.\n",
			      backend ? backend : "?");
	else
		sb_buf_printf(&out, "sagebox self-test: FAILED (%s backend): %zu of %zu checks failed: %s.\n",
			      backend ? backend : "?", n_fail, n_fail + n_pass, names.data ? names.data : "?");
	if (error)
		sb_report_row(&out, "why", "%s", error);
	if (hint && *hint)
		sb_report_row(&out, "fix", "%s", hint);

	sb_report_section(&out, "Failed:", &failed);
	const char *err = sb_report_str(factor, "stderr");
	if (n_fail && err && *err && form == SB_REPORT_FULL)
		sb_buf_printf(&out, "\nSage's stderr:\n%s%s", err, err[strlen(err) - 1] == '\n' ? "" : "\n");
	sb_report_section(&out, "Passed:", &passed);
	sb_report_section(&out, "Not applicable to this backend:", &na);
	if (form == SB_REPORT_FULL)
		sb_buf_printf(&out, "\nEvery field: sagebox self-test --json. What is enforced here: sagebox status.\n");
	else if (!json_is_true(json_object_get(st, "ok")))
		sb_buf_printf(&out, "\nCall sandbox_status for details, and tell the user what failed.\n");
	if (out.len && out.data[out.len - 1] == '\n')
		out.data[--out.len] = '\0';
	return sb_buf_steal(&out, NULL);
}
