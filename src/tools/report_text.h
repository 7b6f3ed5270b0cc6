/* The status and self-test reports as text, verdict first: one line saying
 * whether the sandbox works here and with what, then what is enforced, what
 * is not (and how to fix it), then details. One renderer for the CLI
 * (`sagebox status`, `sagebox self-test`: the full form) and the MCP tools
 * (sandbox_status, sandbox_self_test: the brief form, without details).
 * It only reads the JSON reports, which --json and structuredContent carry
 * unchanged. */
#ifndef SAGEBOX_TOOLS_REPORT_TEXT_H
#define SAGEBOX_TOOLS_REPORT_TEXT_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>

#include "util/buf.h"

enum sb_report_form {
	SB_REPORT_FULL,  /* a person at a terminal: everything */
	SB_REPORT_BRIEF, /* a model: the verdict, what is and is not enforced, what failed */
};

/* sb_runner_status's object (plus "mcp" from the tool), as text (malloc'd). */
char *sb_status_text(const json_t *status, enum sb_report_form form);
/* sb_self_test's object as text (malloc'd). */
char *sb_self_test_text(const json_t *report, enum sb_report_form form);

/* The layout both share (report_text.c). A section is a title line and
 * rows "  label       text", the text wrapped under itself. */
void sb_report_section(struct sb_buf *out, const char *title, const struct sb_buf *rows);
void sb_report_row(struct sb_buf *rows, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void sb_report_vrow(struct sb_buf *rows, const char *label, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* A row of a list of checks: "  ok    text" (mark: ok, FAIL, n/a). */
void sb_report_mark(struct sb_buf *rows, const char *mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A row's further line under its text: "fix: ...", "note: ...". */
void sb_report_sub(struct sb_buf *rows, const char *what, const char *text);
/* A member's string, or NULL. */
const char *sb_report_str(const json_t *o, const char *key);
/* A member's string, or "?" (for text). */
const char *sb_report_txt(const json_t *o, const char *key);

#endif
