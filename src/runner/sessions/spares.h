/* Ready spare sandboxes: one session sandbox per language in use, started
 * ahead of need so that session_open (and job_start) take one at once;
 * after a failed start a maker backs off as the warm pool's keeper does
 * (runner/warm/backoff.h). Internal to src/runner/; above sess.c. */
#ifndef SAGEBOX_SPARES_H
#define SAGEBOX_SPARES_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "core/job.h"
#include "runner/warm/backoff.h"
#include "util/error.h"

struct sess;
struct sb_backend;

struct sb_spares;
/* Starts one maker thread per language (a Sage start never delays a
 * shell's); each keeps a spare only once its language was asked for. */
struct sb_spares *sb_spares_new(const struct sb_config *cfg, const struct sb_backend *be);
/* The makers end; a take from now on fails ("shutting down"). */
void sb_spares_stop(struct sb_spares *sp);
/* Stops, and destroys the spares still ready. */
void sb_spares_free(struct sb_spares *sp);

/* Wait for lang's spare (its maker's start: never slower than starting one
 * here, it began earlier) and offer it to claim, called under the spares'
 * lock (claim takes the registry's: spares first). claim 0: the spare is
 * the caller's, with its one reference, and the maker starts the next;
 * -1 (claim filled err): it stays ready. NULL with err when the start
 * failed, claim refused, or sagebox is stopping. from_spare: one was ready
 * at once. */
struct sess *sb_spares_take(struct sb_spares *sp, enum sb_lang lang, int (*claim)(void *ctx, struct sess *s,
			    struct sb_error *err), void *ctx, bool *from_spare, struct sb_error *err);

/* The spares ready now, by language, into the metrics. */
void sb_spares_metrics(struct sb_spares *sp);

#endif
