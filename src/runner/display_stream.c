#include "runner/display_stream.h"

#include <stdlib.h>
#include <string.h>

#include "core/display_kinds.h"

void sb_display_stream_init(struct sb_display_stream *s, struct sb_display *out, const char *saved_dir)
{
	memset(s, 0, sizeof *s);
	s->out = out;
	s->ctx.saved_dir = saved_dir;
}

static void next_record(struct sb_display_stream *s)
{
	free(s->buf);
	s->buf = NULL;
	s->buf_len = 0;
	s->keep = false;
	s->head_got = 0;
	s->len = s->got = 0;
	s->kind = NULL;
	s->index = 0;
}

static unsigned char type_of(const struct sb_display_stream *s)
{
	return s->head_got > 4 ? s->head[4] : 0;
}

static bool is_item_record(const struct sb_display_stream *s)
{
	return type_of(s) == 'D' || type_of(s) == 'X' || type_of(s) == 'E';
}

/* The record is the next of class c. */
static void count(struct sb_display_stream *s, enum sb_display_class c)
{
	s->cls = c;
	s->index = sb_display_next_index(s->out, c);
}

static void drop(struct sb_display_stream *s, enum sb_drop why, const char *detail)
{
	sb_display_drop(s->out, s->cls, s->index, why, detail);
}

/* The record's type and kind came: count it, and keep its payload (under
 * its class's caps, which the driver applied first) or drop it. */
static int on_kind(struct sb_display_stream *s)
{
	s->kind = sb_display_kind_of(s->head[5]);
	if (type_of(s) == 'E') {
		/* an item's own items are over (an interact's rendering): not an item */
		if (s->len == 2 && s->kind && s->kind->opens_group) {
			sb_display_group_end(s->out, s->kind);
		} else {
			count(s, SB_DCLASS_ITEM);
			drop(s, SB_DROP_INVALID, "a malformed end record");
		}
		s->kind = NULL;
		return 0;
	}
	count(s, s->kind ? s->kind->cls : SB_DCLASS_ITEM);
	if (type_of(s) == 'X') {
		if (s->len != 3)
			drop(s, SB_DROP_INVALID, "a malformed skip record");
		else if (!s->kind)
			drop(s, SB_DROP_INVALID, "a skip record of an unknown kind");
		return 0;
	}
	if (!s->kind) {
		drop(s, SB_DROP_INVALID, "a display item of an unknown kind");
		return 0;
	}
	size_t payload = s->len - 2;
	if (payload < s->kind->prefix) {
		drop(s, SB_DROP_INVALID, "a record too short for its kind");
		return 0;
	}
	int full = sb_display_room(s->out, s->cls, payload - s->kind->prefix);
	if (full >= 0) {
		drop(s, (enum sb_drop)full, NULL);
		return 0;
	}
	if (!(s->buf = malloc(payload + 1)))
		return -1;
	s->keep = true;
	return 0;
}

static void on_skip_reason(struct sb_display_stream *s, unsigned char r)
{
	if (!s->kind)
		return; /* dropped already */
	switch (r) {
	case 'c':
		drop(s, SB_DROP_OVER_COUNT, NULL);
		return;
	case 'i':
		drop(s, SB_DROP_TOO_BIG, NULL);
		return;
	case 't':
		drop(s, SB_DROP_OVER_TOTAL, NULL);
		return;
	default:
		drop(s, SB_DROP_INVALID, "a skip record with an unknown reason");
	}
}

/* A header byte: the length's, then the type, then (for an item) its kind. */
static int on_head(struct sb_display_stream *s, unsigned char c)
{
	s->head[s->head_got++] = c;
	if (s->head_got < 4)
		return 0;
	if (s->head_got == 4) {
		s->len = (uint32_t)s->head[0] << 24 | (uint32_t)s->head[1] << 16 | (uint32_t)s->head[2] << 8 | s->head[3];
		if (s->len == 0) {
			count(s, SB_DCLASS_FIGURE);
			drop(s, SB_DROP_INVALID, "an empty record");
		}
		return 0;
	}
	s->got++;
	if (s->head_got == 5) {
		if (!is_item_record(s)) {
			count(s, SB_DCLASS_FIGURE);
			drop(s, SB_DROP_INVALID, "an unknown record");
		} else if (s->len == 1) {
			count(s, SB_DCLASS_ITEM);
			drop(s, SB_DROP_INVALID, "a display item without a kind");
		}
		return 0;
	}
	return on_kind(s);
}

/* The next byte is the type's, or an item's kind's. */
static bool in_head(const struct sb_display_stream *s)
{
	return s->head_got < 4 || (s->got < s->len && (s->head_got == 4 || (s->head_got == 5 && is_item_record(s))));
}

static int on_complete(struct sb_display_stream *s)
{
	int rc = 0;
	if (s->keep) {
		s->buf[s->buf_len] = '\0';
		char *data = s->buf;
		s->buf = NULL;
		rc = sb_display_add(s->out, s->kind, s->index, data, s->buf_len, &s->ctx) < 0 ? -1 : 0;
	}
	sb_display_record_done(s->out);
	next_record(s);
	return rc;
}

int sb_display_stream_feed(struct sb_display_stream *s, const char *p, size_t n)
{
	while (n > 0) {
		if (in_head(s)) {
			if (on_head(s, (unsigned char)*p++))
				return -1;
			n--;
		} else {
			size_t k = s->len - s->got < n ? s->len - s->got : n;
			if (type_of(s) == 'X' && s->len == 3 && s->got == 2)
				on_skip_reason(s, (unsigned char)*p);
			if (s->keep) {
				memcpy(s->buf + s->buf_len, p, k);
				s->buf_len += k;
			}
			p += k;
			n -= k;
			s->got += (uint32_t)k;
		}
		if (s->head_got >= 4 && s->got == s->len && on_complete(s))
			return -1;
	}
	return 0;
}

void sb_display_stream_end(struct sb_display_stream *s)
{
	if (s->head_got > 0) {
		if (!s->index)
			count(s, is_item_record(s) ? SB_DCLASS_ITEM : SB_DCLASS_FIGURE);
		drop(s, SB_DROP_INVALID, "the display stream ended inside a record");
	}
	next_record(s);
}
