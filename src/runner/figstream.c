#include "runner/figstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/png.h"

void sb_figstream_init(struct sb_figstream *s, struct sb_figures *out)
{
	memset(s, 0, sizeof *s);
	s->out = out;
	s->kind = -1;
	out->display.pending3d = -1;
}

static void next_record(struct sb_figstream *s)
{
	free(s->png);
	s->png = NULL;
	s->png_len = 0;
	s->keep = false;
	s->head_got = 0;
	s->len = s->got = 0;
	s->kind = -1;
}

static bool is_display(const struct sb_figstream *s)
{
	return s->kind == 'D' || s->kind == 'X';
}

static void drop(struct sb_figstream *s, enum sb_figure_drop why, const char *detail)
{
	if (is_display(s))
		sb_display_drop(&s->out->display, s->index, why, detail);
	else
		sb_figures_drop(s->out, s->index, why, detail);
}

/* The host's own caps, in the order the driver applies them: keep the
 * record's n bytes (buffered, s->keep) or drop it, naming the cap. */
static int admit(struct sb_figstream *s, bool over_count, size_t n, size_t max_one, size_t total, size_t max_total)
{
	if (over_count)
		drop(s, SB_FIG_OVER_COUNT, NULL);
	else if (n > max_one)
		drop(s, SB_FIG_TOO_BIG, NULL);
	else if (total + n > max_total)
		drop(s, SB_FIG_OVER_TOTAL, NULL);
	else if (!(s->png = malloc(s->len)))
		return -1;
	else
		s->keep = true;
	return 0;
}

/* A display item (display.py's 'D' kind text, or 'X' reason): its own caps,
 * which the driver applied first. */
static int on_display_kind(struct sb_figstream *s)
{
	const struct sb_figure_caps *c = &sb_figure_caps;
	const struct sb_display *d = &s->out->display;
	if (s->kind == 'X')
		return s->len == 2 ? 0 : (drop(s, SB_FIG_INVALID, "a malformed display skip record"), 0);
	if (s->len < 2) {
		drop(s, SB_FIG_INVALID, "a display item without a kind");
		return 0;
	}
	return admit(s, sb_display_items(d) >= c->max_items, s->len - 2, c->max_item_bytes,
		     d->total_bytes, c->max_items_total_bytes);
}

/* A figure's first byte says what it is: decide whether to keep it. */
static int on_kind(struct sb_figstream *s)
{
	const struct sb_figure_caps *c = &sb_figure_caps;
	size_t n = s->len - 1;
	if (is_display(s))
		return on_display_kind(s);
	if (s->kind == 'S')
		return s->len == 2 ? 0 : (drop(s, SB_FIG_INVALID, "a malformed skip record"), 0);
	if (s->kind == 'F' && (!s->saved_dir || n < 4)) {
		drop(s, SB_FIG_INVALID, s->saved_dir ? "a malformed saved-figure record" : "a saved figure outside a session");
		return 0;
	}
	if (s->kind == 'F')
		n -= 4; /* the number */
	else if (s->kind != 'P') {
		drop(s, SB_FIG_INVALID, "an unknown figure record");
		return 0;
	}
	return admit(s, s->out->n >= c->max_count, n, c->max_image_bytes, s->out->total_bytes, c->max_total_bytes);
}

static void on_skip_reason(struct sb_figstream *s, unsigned char r)
{
	switch (r) {
	case 'c':
		drop(s, SB_FIG_OVER_COUNT, NULL);
		return;
	case 'i':
		drop(s, SB_FIG_TOO_BIG, NULL);
		return;
	case 't':
		drop(s, SB_FIG_OVER_TOTAL, NULL);
		return;
	default:
		drop(s, SB_FIG_INVALID, "a skip record with an unknown reason");
	}
}

/* A display item came whole: its first byte is its kind. */
static int on_display_item(struct sb_figstream *s)
{
	int kind = sb_display_kind_of((unsigned char)s->png[0]);
	if (kind < 0) {
		drop(s, SB_FIG_INVALID, "a display item of an unknown kind");
		return 0;
	}
	size_t n = s->png_len - 1;
	memmove(s->png, s->png + 1, n);
	s->png[n] = '\0';
	char *text = s->png;
	s->png = NULL;
	return sb_display_add(&s->out->display, (enum sb_display_kind)kind, s->index, text, n) < 0 ? -1 : 0;
}

static int on_complete(struct sb_figstream *s)
{
	if (!s->keep)
		return 0;
	if (is_display(s))
		return on_display_item(s);
	uint32_t w, h, saved = 0;
	char why[96];
	if (s->kind == 'F') {
		const unsigned char *b = (const unsigned char *)s->png;
		saved = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
		s->png_len -= 4;
		memmove(s->png, s->png + 4, s->png_len);
	}
	if (s->kind == 'F' && (saved == 0 || saved > 999999999)) {
		drop(s, SB_FIG_INVALID, "a bad saved-figure number");
	} else if (sb_png_check(s->png, s->png_len, &w, &h, why, sizeof why)) {
		drop(s, SB_FIG_INVALID, why);
	} else if (w > sb_figure_caps.max_side || h > sb_figure_caps.max_side) {
		drop(s, SB_FIG_INVALID, "larger than the long-side cap");
	} else {
		char *png = s->png;
		s->png = NULL;
		if (sb_figures_add(s->out, s->index, png, s->png_len, w, h) ||
		    sb_display_add_png(&s->out->display, (long)s->out->n - 1))
			return -1;
		if (saved) {
			/* Only a number comes from the sandbox: the host writes the
			 * name. */
			char path[4200];
			snprintf(path, sizeof path, "%s/figure-%u.png", s->saved_dir, (unsigned)saved);
			if (!(s->out->v[s->out->n - 1].saved_path = strdup(path)))
				return -1;
		}
	}
	return 0;
}

int sb_figstream_feed(struct sb_figstream *s, const char *p, size_t n)
{
	while (n > 0) {
		if (s->head_got < 4) {
			s->head[s->head_got++] = (unsigned char)*p++;
			n--;
			if (s->head_got < 4)
				continue;
			s->len = (uint32_t)s->head[0] << 24 | (uint32_t)s->head[1] << 16 | (uint32_t)s->head[2] << 8 |
				 s->head[3];
			if (s->len == 0) {
				s->index = ++s->out->seen;
				drop(s, SB_FIG_INVALID, "an empty figure record");
				next_record(s);
			}
			continue;
		}
		if (s->kind < 0) {
			s->kind = (unsigned char)*p++;
			n--;
			s->got = 1;
			/* figures and display items are numbered apart */
			s->index = is_display(s) ? ++s->out->display.seen : ++s->out->seen;
			if (on_kind(s))
				return -1;
		} else {
			size_t k = s->len - s->got < n ? s->len - s->got : n;
			if ((s->kind == 'S' || s->kind == 'X') && s->len == 2)
				on_skip_reason(s, (unsigned char)*p);
			if (s->keep) {
				memcpy(s->png + s->png_len, p, k);
				s->png_len += k;
			}
			p += k;
			n -= k;
			s->got += (uint32_t)k;
		}
		if (s->got == s->len) {
			int rc = on_complete(s);
			sb_display_record_done(&s->out->display);
			next_record(s);
			if (rc)
				return -1;
		}
	}
	return 0;
}

void sb_figstream_end(struct sb_figstream *s)
{
	if (s->head_got > 0) {
		if (s->head_got < 4 || s->kind < 0)
			s->index = ++s->out->seen;
		drop(s, SB_FIG_INVALID, "the figure stream ended inside a figure");
	}
	next_record(s);
}
