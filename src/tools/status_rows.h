/* The status text's rows (status_text.c assembles them): what each
 * backend's report says is enforced and not, read by status_backends.c. */
#ifndef SAGEBOX_TOOLS_STATUS_ROWS_H
#define SAGEBOX_TOOLS_STATUS_ROWS_H

#include "tools/report_text.h"

struct sb_status_rows {
	struct sb_buf on, off, warn, details; /* enforced, not enforced, warnings, details */
	size_t n_off;                         /* rows of off, for the verdict line */
	enum sb_report_form form;
};

/* A row of "Not enforced", counted. */
void sb_status_off(struct sb_status_rows *r, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The backend report lists this capability ("isolated", ...). */
bool sb_status_has_cap(const json_t *backend, const char *cap);
/* The rows of the backend's report (st.backend), whatever its shape. */
void sb_status_backend_rows(struct sb_status_rows *r, const json_t *st);

#endif
