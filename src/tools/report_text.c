/* The layout of the status and self-test texts: sections of labelled rows,
 * long texts wrapped under themselves at spaces (so never inside a UTF-8
 * character), so that a terminal of 100 columns reads them as a table. */
#include "tools/report_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_W 12
#define INDENT (2 + LABEL_W + 2)
#define WIDTH 100
#define MARK_W 4

const char *sb_report_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

const char *sb_report_txt(const json_t *o, const char *key)
{
	const char *s = sb_report_str(o, key);
	return s ? s : "?";
}

/* Append text, starting at column col, wrapped at WIDTH; continuation
 * lines are indented by indent. */
static void wrapped(struct sb_buf *b, const char *text, size_t col, size_t indent)
{
	const char *p = text;
	while (*p) {
		size_t room = col < WIDTH ? WIDTH - col : 1;
		size_t n = strlen(p);
		if (n <= room) {
			sb_buf_append(b, p, n);
			break;
		}
		/* The last space within room, else the first one after it. */
		size_t cut = room;
		while (cut > 0 && p[cut] != ' ')
			cut--;
		if (cut == 0) {
			const char *sp = strchr(p + room, ' ');
			cut = sp ? (size_t)(sp - p) : n;
		}
		sb_buf_append(b, p, cut);
		p += cut;
		while (*p == ' ')
			p++;
		if (*p)
			sb_buf_printf(b, "\n%*s", (int)indent, "");
		col = indent;
	}
	sb_buf_append(b, "\n", 1);
}

__attribute__((format(printf, 4, 0))) static void vrow(struct sb_buf *rows, size_t width, const char *label,
							 const char *fmt, va_list ap)
{
	char *text = NULL;
	if (vasprintf(&text, fmt, ap) < 0)
		return;
	size_t w = strlen(label) > width ? strlen(label) : width;
	sb_buf_printf(rows, "  %-*s  ", (int)width, label);
	wrapped(rows, text, 2 + w + 2, 2 + width + 2);
	free(text);
}

void sb_report_row(struct sb_buf *rows, const char *label, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vrow(rows, LABEL_W, label, fmt, ap);
	va_end(ap);
}

void sb_report_vrow(struct sb_buf *rows, const char *label, const char *fmt, va_list ap)
{
	vrow(rows, LABEL_W, label, fmt, ap);
}

void sb_report_mark(struct sb_buf *rows, const char *mark, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vrow(rows, MARK_W, mark, fmt, ap);
	va_end(ap);
}

void sb_report_sub(struct sb_buf *rows, const char *what, const char *text)
{
	if (!text || !*text)
		return;
	sb_buf_printf(rows, "%*s%s: ", INDENT, "", what);
	wrapped(rows, text, INDENT + strlen(what) + 2, INDENT);
}

void sb_report_section(struct sb_buf *out, const char *title, const struct sb_buf *rows)
{
	if (!rows->len)
		return;
	sb_buf_printf(out, "\n%s\n", title);
	sb_buf_append(out, rows->data, rows->len);
}
