#include "runner/progress.h"

#include <stdlib.h>

void sb_progress_maybe_report(const struct sb_run_hooks *h, uint64_t *next, uint64_t start, uint64_t now,
			      const struct sb_capture *out, const struct sb_capture *err)
{
	if (!h || !h->progress || now < *next)
		return;
	*next = now + (h->progress_interval_ms ? h->progress_interval_ms : 2000);
	size_t tl = 0;
	char *tail = sb_capture_tail_copy(out, 2048, &tl);
	struct sb_progress p = {
		.elapsed_ms = now - start,
		.stdout_bytes = out->total,
		.stderr_bytes = err->total,
		.stdout_tail = tail ? tail : "",
		.stdout_tail_len = tail ? tl : 0,
	};
	h->progress(h->ctx, &p);
	free(tail);
}
