#include "runner/warm/backoff.h"

#include "util/clock.h"

void sb_backoff_failed(struct sb_backoff *b, const struct sb_error *err)
{
	b->failed_ms = sb_now_ms();
	b->failures++;
	b->since_ok++;
	if (err)
		b->err = *err;
}

void sb_backoff_ok(struct sb_backoff *b)
{
	b->since_ok = 0;
}

bool sb_backoff_may_try(const struct sb_backoff *b, uint64_t now)
{
	return !b->since_ok || now >= b->failed_ms + SB_BACKOFF_RETRY_MS;
}
