#include "runner/capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/utf8.h"

int sb_capture_init(struct sb_capture *c, const char *name, size_t cap)
{
	memset(c, 0, sizeof *c);
	c->name = name;
	c->cap = cap;
	c->head = malloc(cap / 2 + 1);
	c->tail_cap = cap - cap / 2;
	c->tail = malloc(c->tail_cap + 1);
	if (!c->head || !c->tail) {
		sb_capture_free(c);
		return -1;
	}
	return 0;
}

void sb_capture_free(struct sb_capture *c)
{
	free(c->head);
	free(c->tail);
	c->head = c->tail = NULL;
}

int sb_capture_add(struct sb_capture *c, const char *p, size_t n)
{
	c->total += n;
	size_t head_room = c->cap / 2 - c->head_len;
	size_t h = n < head_room ? n : head_room;
	memcpy(c->head + c->head_len, p, h);
	c->head_len += h;
	p += h;
	n -= h;
	if (n >= c->tail_cap) { /* only the last tail_cap bytes matter */
		p += n - c->tail_cap;
		n = c->tail_cap;
	}
	for (size_t i = 0; i < n; i++) {
		size_t at = (c->tail_start + c->tail_len) % c->tail_cap;
		c->tail[at] = p[i];
		if (c->tail_len < c->tail_cap)
			c->tail_len++;
		else
			c->tail_start = (c->tail_start + 1) % c->tail_cap;
	}
	return 0;
}

bool sb_capture_truncated(const struct sb_capture *c)
{
	return c->total > c->head_len + c->tail_len;
}

/* The tail ring in order, into a buffer. */
static void tail_linear(const struct sb_capture *c, char *dst)
{
	for (size_t i = 0; i < c->tail_len; i++)
		dst[i] = c->tail[(c->tail_start + i) % c->tail_cap];
}

char *sb_capture_tail_copy(const struct sb_capture *c, size_t n, size_t *len)
{
	size_t kept = c->head_len + c->tail_len;
	char *all = malloc(kept + 1);
	if (!all)
		return NULL;
	memcpy(all, c->head, c->head_len);
	tail_linear(c, all + c->head_len);
	size_t from = kept > n ? kept - n : 0;
	/* Start at a character boundary. */
	while (from < kept && ((unsigned char)all[from] & 0xC0) == 0x80)
		from++;
	char *out = sb_utf8_sanitize(all + from, kept - from, len);
	free(all);
	return out;
}

int sb_capture_finish(const struct sb_capture *c, struct sb_stream *out)
{
	SB_AUTO_BUF b = {0};
	char *tail = malloc(c->tail_len + 1);
	if (!tail)
		return -1;
	tail_linear(c, tail);
	size_t head_len = c->head_len, tail_from = 0;
	bool truncated = sb_capture_truncated(c);
	if (truncated) {
		/* Cut at line boundaries when one is near, so the model sees whole
		 * lines; never give up more than a quarter of each part. */
		for (size_t i = head_len; i > head_len - head_len / 4 && i > 0; i--)
			if (c->head[i - 1] == '\n') {
				head_len = i;
				break;
			}
		for (size_t i = 0; i < c->tail_len / 4; i++)
			if (tail[i] == '\n') {
				tail_from = i + 1;
				break;
			}
	}
	uint64_t cut = c->total - head_len - (c->tail_len - tail_from);
	int rc = sb_buf_append(&b, c->head, head_len);
	if (truncated)
		rc |= sb_buf_printf(&b,
				    "%s\n... [sagebox: %llu bytes of %s cut here; %llu bytes in all, "
				    "the first %zu and the last %zu are shown] ...\n",
				    head_len && c->head[head_len - 1] != '\n' ? "\n" : "", (unsigned long long)cut,
				    c->name, (unsigned long long)c->total, head_len, c->tail_len - tail_from);
	/* Output between half the cap and the cap is head + tail with nothing
	 * cut: the tail is the rest of it (it was once dropped here). */
	rc |= sb_buf_append(&b, tail + tail_from, c->tail_len - tail_from);
	free(tail);
	if (rc)
		return -1;
	out->data = sb_utf8_sanitize(b.data ? b.data : "", b.len, &out->len);
	out->truncated = truncated;
	out->total_bytes = c->total;
	return out->data ? 0 : -1;
}

static int sink_write(struct sb_sink *k, enum sb_stream_id st, const char *p, size_t n)
{
	struct sb_capture_sink *c = (struct sb_capture_sink *)k;
	if (st == SB_STREAM_DISPLAY)
		return sb_display_stream_feed(&c->stream, p, n);
	return sb_capture_add(st == SB_STREAM_STDOUT ? &c->out : &c->err, p, n);
}

static char *sink_tail(struct sb_sink *k, size_t n, size_t *len)
{
	return sb_capture_tail_copy(&((struct sb_capture_sink *)k)->out, n, len);
}

static const struct sb_sink_ops capture_sink_ops = {.write = sink_write, .tail = sink_tail};

int sb_capture_sink_init(struct sb_capture_sink *c, size_t cap, const char *saved_dir)
{
	c->sink = (struct sb_sink){.ops = &capture_sink_ops, .flood_bytes = (uint64_t)cap * sb_sup_policy.flood_factor};
	sb_display_init(&c->display);
	sb_display_stream_init(&c->stream, &c->display, saved_dir);
	if (sb_capture_init(&c->out, "stdout", cap) == 0 && sb_capture_init(&c->err, "stderr", cap) == 0)
		return 0;
	sb_capture_free(&c->out);
	sb_capture_free(&c->err);
	return -1;
}

void sb_capture_sink_finish(struct sb_capture_sink *c, struct sb_result *res)
{
	if ((sb_capture_finish(&c->out, &res->out) || sb_capture_finish(&c->err, &res->err)) && !res->internal_error)
		res->internal_error = strdup("out of memory while collecting output");
	sb_capture_free(&c->out);
	sb_capture_free(&c->err);
	sb_display_stream_end(&c->stream);
	sb_display_free(&res->display);
	res->display = c->display;
	sb_display_init(&c->display);
}
