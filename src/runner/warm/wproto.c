#include "runner/warm/wproto.h"

#include "runner/supervise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_wp_reader_init(struct sb_wp_reader *r)
{
	memset(r, 0, sizeof *r);
	r->types = SB_WP_WORKER_TYPES;
}

void sb_wp_reader_free(struct sb_wp_reader *r)
{
	unsigned types = r->types;
	json_decref(r->last);
	sb_buf_free(&r->in);
	memset(r, 0, sizeof *r);
	r->types = types;
}

int sb_wp_reader_feed(struct sb_wp_reader *r, const void *p, size_t n)
{
	if (r->off > 0 && r->off == r->in.len) {
		r->in.len = 0;
		r->off = 0;
	} else if (r->off > (1u << 16) && r->off * 2 > r->in.len) {
		memmove(r->in.data, r->in.data + r->off, r->in.len - r->off);
		r->in.len -= r->off;
		r->off = 0;
	}
	return sb_buf_append(&r->in, p, n);
}

static const struct {
	const char *name;
	enum sb_wp_type type;
	int payload; /* may carry bytes */
} types[] = {
	{"ready", SB_WP_READY, 0},
	{"started", SB_WP_STARTED, 0},
	{"out", SB_WP_OUT, 1},
	{"done", SB_WP_DONE, 0},
	{"data", SB_WP_DATA, 1},
	{"reply", SB_WP_REPLY, 0},
};

int sb_wp_reader_next(struct sb_wp_reader *r, struct sb_wp_frame *f, char *why, size_t whyn)
{
	json_decref(r->last);
	r->last = NULL;
	size_t avail = r->in.len - r->off;
	if (avail < 4)
		return 0;
	const unsigned char *p = (const unsigned char *)r->in.data + r->off;
	uint32_t n = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	/* Checked before waiting for the body: a worker announcing a huge
	 * frame must not make the host buffer it. */
	if (n > SB_WP_MAX_IN) {
		snprintf(why, whyn, "frame of %u bytes (limit %u)", n, SB_WP_MAX_IN);
		return -1;
	}
	if (avail - 4 < n)
		return 0;
	const char *body = (const char *)p + 4;
	const char *nl = memchr(body, '\n', n);
	size_t hlen = nl ? (size_t)(nl - body) : n;
	json_error_t je;
	json_t *h = json_loadb(body, hlen, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(h)) {
		json_decref(h);
		snprintf(why, whyn, "frame header is not a JSON object");
		return -1;
	}
	const char *t = json_string_value(json_object_get(h, "type"));
	size_t i = 0;
	for (; t && i < sizeof types / sizeof types[0]; i++)
		if (!strcmp(t, types[i].name) && (r->types & 1u << types[i].type))
			break;
	if (!t || i == sizeof types / sizeof types[0]) {
		snprintf(why, whyn, "unknown frame type %.40s", t ? t : "(none)");
		json_decref(h);
		return -1;
	}
	if (nl && !types[i].payload) {
		snprintf(why, whyn, "a %s frame with a payload", t);
		json_decref(h);
		return -1;
	}
	r->off += 4 + n;
	r->last = h;
	f->type = types[i].type;
	f->hdr = h;
	f->payload = nl ? nl + 1 : "";
	f->payload_len = nl ? n - hlen - 1 : 0;
	return 1;
}

/* An integer member of h within [lo, hi]. */
static bool get_int(json_t *h, const char *k, int lo, int hi, int *out)
{
	json_t *v = json_object_get(h, k);
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return false;
	*out = (int)json_integer_value(v);
	return true;
}

/* The done frame's flags: one row each. */
static const struct {
	const char *name;
	unsigned flag;
} done_flags[] = {
	{"timed_out", SB_WP_DONE_TIMED_OUT},     {"cancelled", SB_WP_DONE_CANCELLED},
	{"flooded", SB_WP_DONE_FLOODED},         {"interrupted", SB_WP_DONE_INTERRUPTED},
	{"restarted", SB_WP_DONE_RESTARTED},     {"killed", SB_WP_DONE_KILLED},
};

static int decode_done(const struct sb_wp_job *j, json_t *h, struct sb_wp_event *ev)
{
	if (!get_int(h, "exit_code", -1, 255, &ev->exit_code) || !get_int(h, "signal", 0, 127, &ev->signal))
		return -1;
	unsigned present = 0;
	for (size_t i = 0; i < sizeof done_flags / sizeof *done_flags; i++) {
		json_t *v = json_object_get(h, done_flags[i].name);
		if (!v)
			continue;
		if (!json_is_boolean(v))
			return -1;
		present |= done_flags[i].flag;
		if (json_is_true(v))
			ev->flags |= done_flags[i].flag;
	}
	json_t *reason = json_object_get(h, "reason");
	if ((j->done_needs & ~present) || (reason && !json_is_string(reason)))
		return -1;
	ev->reason = json_string_value(reason);
	return 0;
}

#define REJECT(...) (snprintf(why, whyn, __VA_ARGS__), -1)

int sb_wp_job_decode(struct sb_wp_job *j, const struct sb_wp_frame *f, struct sb_wp_event *ev, char *why,
		     size_t whyn)
{
	memset(ev, 0, sizeof *ev);
	ev->type = f->type;
	ev->hdr = f->hdr;
	if (j->done)
		return REJECT("a frame after the job's done");
	if (!(j->types & 1u << f->type))
		return REJECT("an unexpected frame");
	if (f->type == SB_WP_READY) {
		/* A fresh worker says it is ready once, before the job starts. */
		if (j->started)
			return REJECT("a ready frame after started");
		j->types &= ~(1u << SB_WP_READY);
		return 0;
	}
	json_t *idv = json_object_get(f->hdr, "id");
	if (!json_is_integer(idv) || json_integer_value(idv) != j->id)
		return REJECT("a frame for another job");
	switch (f->type) {
	case SB_WP_STARTED:
		if (j->started)
			return REJECT("started twice");
		j->started = true;
		return 0;
	case SB_WP_OUT:
		ev->stream = sb_stream_by_name(json_string_value(json_object_get(f->hdr, "stream")));
		if (ev->stream < 0 || (j->needs_started && !j->started))
			return REJECT("a bad output frame");
		ev->payload = f->payload;
		ev->payload_len = f->payload_len;
		return 0;
	case SB_WP_DONE:
		if ((j->needs_started && !j->started) || decode_done(j, f->hdr, ev))
			return REJECT("a malformed done frame");
		j->done = true;
		return 0;
	case SB_WP_REPLY: {
		json_t *e = json_object_get(f->hdr, "error");
		if (e && !json_is_string(e))
			return REJECT("a malformed reply");
		ev->error = json_string_value(e);
		return 0;
	}
	case SB_WP_READY:
	case SB_WP_DATA:
		break;
	}
	return REJECT("an unexpected frame");
}

int sb_wp_encode(struct sb_buf *out, json_t *hdr, const void *payload, size_t n)
{
	/* Compact JSON never contains a raw newline: the first "\n" ends it. */
	char *h = json_dumps(hdr, JSON_COMPACT | JSON_ENSURE_ASCII);
	if (!h)
		return -1;
	size_t hl = strlen(h);
	size_t body = hl + (n ? 1 + n : 0);
	if (body > UINT32_MAX) {
		free(h);
		return -1;
	}
	unsigned char len[4] = {(unsigned char)(body >> 24), (unsigned char)(body >> 16), (unsigned char)(body >> 8),
				(unsigned char)body};
	int rc = sb_buf_append(out, len, 4);
	rc |= sb_buf_append(out, h, hl);
	if (n) {
		rc |= sb_buf_append(out, "\n", 1);
		rc |= sb_buf_append(out, payload, n);
	}
	free(h);
	return rc ? -1 : 0;
}
