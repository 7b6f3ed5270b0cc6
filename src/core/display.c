/* The store of what a job displayed: the kept items in order, and per class
 * the counts the caps are held to and what was dropped and why. */
#include "core/display.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/display_caps.h"

void sb_display_init(struct sb_display *d)
{
	memset(d, 0, sizeof *d);
	d->pending = -1;
	d->open = -1;
}

void sb_display_free(struct sb_display *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].data);
		free(d->v[i].saved_path);
		json_decref(d->v[i].value);
	}
	free(d->v);
	sb_display_init(d);
}

unsigned sb_display_next_index(struct sb_display *d, enum sb_display_class c)
{
	return ++d->by_class[c].seen;
}

int sb_display_room(const struct sb_display *d, enum sb_display_class c, size_t n)
{
	const struct sb_display_caps *caps = &sb_display_classes[c].caps;
	const struct sb_display_tally *t = &d->by_class[c];
	if (t->kept >= caps->max_count)
		return SB_DROP_OVER_COUNT;
	if (n > caps->max_one_bytes)
		return SB_DROP_TOO_BIG;
	if (t->bytes + n > caps->max_total_bytes)
		return SB_DROP_OVER_TOTAL;
	return -1;
}

/* A figure kept: the pending item's picture, when that item came in the
 * record right before (and has none yet). */
static void attach_picture(struct sb_display *d, struct sb_display_item *it)
{
	long p = d->pending;
	if (p < 0 || (size_t)p >= d->n || d->v[p].picture >= 0 || it->kind->cls != SB_DCLASS_FIGURE)
		return;
	d->v[p].picture = (long)d->n;
	it->is_picture = true;
	d->pending = -1;
}

int sb_display_add(struct sb_display *d, const struct sb_display_kind *k, unsigned index, char *data, size_t len,
		   const struct sb_display_ctx *c)
{
	struct sb_display_item it = {.kind = k, .index = index, .data = data, .len = len, .picture = -1,
				     .group = d->open};
	char why[96] = "";
	int rc = d->open >= 0 && k->opens_group ? (snprintf(why, sizeof why, "one %s inside another", k->name), 1)
						  : k->check(&it, c, why, sizeof why);
	if (rc) {
		free(it.data);
		free(it.saved_path);
		json_decref(it.value);
		if (rc > 0)
			sb_display_drop(d, k->cls, index, SB_DROP_INVALID, why);
		return rc;
	}
	struct sb_display_item *v = realloc(d->v, (d->n + 1) * sizeof *v);
	if (!v) {
		free(it.data);
		free(it.saved_path);
		json_decref(it.value);
		return -1;
	}
	d->v = v;
	struct sb_display_tally *t = &d->by_class[k->cls];
	it.ordinal = t->kept++;
	t->bytes += it.len;
	attach_picture(d, &it);
	d->v[d->n++] = it;
	if (k->takes_picture) {
		d->pending = (long)d->n - 1;
		d->pending_fresh = true;
	}
	if (k->opens_group)
		d->open = (long)d->n - 1;
	return 0;
}

void sb_display_group_end(struct sb_display *d, const struct sb_display_kind *k)
{
	if (d->open >= 0 && d->v[d->open].kind == k)
		d->open = -1;
}

void sb_display_record_done(struct sb_display *d)
{
	if (!d->pending_fresh)
		d->pending = -1;
	d->pending_fresh = false;
}

void sb_display_drop(struct sb_display *d, enum sb_display_class c, unsigned index, enum sb_drop why,
		     const char *detail)
{
	struct sb_display_tally *t = &d->by_class[c];
	if ((int)why < 0 || why >= SB_DROPS)
		return;
	if (!t->dropped[why]++)
		t->first_dropped[why] = index;
	if (why == SB_DROP_INVALID && detail && !t->invalid_why[0])
		snprintf(t->invalid_why, sizeof t->invalid_why, "%s", detail);
}

unsigned sb_display_dropped(const struct sb_display *d, enum sb_display_class c)
{
	unsigned n = 0;
	for (int i = 0; i < SB_DROPS; i++)
		n += d->by_class[c].dropped[i];
	return n;
}

bool sb_display_any(const struct sb_display *d)
{
	for (int c = 0; c < SB_DCLASSES; c++)
		if (sb_display_dropped(d, (enum sb_display_class)c))
			return true;
	return d->n > 0;
}
