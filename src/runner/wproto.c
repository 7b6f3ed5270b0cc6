#include "runner/wproto.h"

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
