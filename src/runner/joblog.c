#include "runner/joblog.h"

#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

static struct sb_joblog *jl(struct sb_sink *k)
{
	return (struct sb_joblog *)k;
}

static int jl_write(struct sb_sink *k, enum sb_stream_id st, const char *p, size_t n)
{
	struct sb_joblog *l = jl(k);
	pthread_mutex_lock(&l->lock);
	l->total[st] += n;
	if (n > SB_JOBLOG_KEEP) { /* only the last KEEP bytes can be kept */
		l->base += l->len + (n - SB_JOBLOG_KEEP);
		l->len = 0;
		p += n - SB_JOBLOG_KEEP;
		n = SB_JOBLOG_KEEP;
	}
	if (l->len + n > SB_JOBLOG_KEEP) {
		/* Drop the oldest bytes: at least half the log, so that a job
		 * writing in small pieces does not move it on every write. */
		size_t drop = l->len + n - SB_JOBLOG_KEEP;
		if (drop < l->len / 2)
			drop = l->len / 2;
		memmove(l->data, l->data + drop, l->len - drop);
		l->len -= drop;
		l->base += drop;
	}
	if (l->len + n > l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 65536;
		while (cap < l->len + n)
			cap *= 2;
		char *d = realloc(l->data, cap);
		if (!d) {
			pthread_mutex_unlock(&l->lock);
			return -1;
		}
		l->data = d;
		l->cap = cap;
	}
	memcpy(l->data + l->len, p, n);
	l->len += n;
	pthread_mutex_unlock(&l->lock);
	return 0;
}

/* A copy of kept bytes [from, to) (offsets), starting and ending at
 * character boundaries, invalid bytes replaced. Under the lock. */
static char *copy_locked(struct sb_joblog *l, uint64_t from, uint64_t to, size_t *len, uint64_t *next)
{
	const char *p = l->data + (from - l->base);
	size_t n = (size_t)(to - from);
	/* A page that begins inside a character skips its continuation bytes;
	 * one that ends inside a character leaves it to the next page. */
	while (n && ((unsigned char)*p & 0xC0) == 0x80 && from > l->base)
		p++, n--, from++;
	if (to < l->base + l->len)
		n = sb_utf8_prefix(p, n, n);
	*next = from + n;
	return sb_utf8_sanitize(p, n, len);
}

char *sb_joblog_page(struct sb_joblog *l, uint64_t offset, size_t max, size_t *len, uint64_t *next,
		     uint64_t *dropped, uint64_t *end)
{
	pthread_mutex_lock(&l->lock);
	uint64_t top = l->base + l->len;
	*end = top;
	*dropped = offset < l->base ? l->base - offset : 0;
	uint64_t from = offset < l->base ? l->base : offset > top ? top : offset;
	uint64_t to = top - from > max ? from + max : top;
	char *out = copy_locked(l, from, to, len, next);
	pthread_mutex_unlock(&l->lock);
	return out;
}

char *sb_joblog_tail(struct sb_joblog *l, size_t n, size_t *len)
{
	pthread_mutex_lock(&l->lock);
	uint64_t top = l->base + l->len;
	uint64_t from = l->len > n ? top - n : l->base;
	uint64_t next;
	char *out = copy_locked(l, from, top, len, &next);
	pthread_mutex_unlock(&l->lock);
	return out;
}

uint64_t sb_joblog_bytes(struct sb_joblog *l)
{
	pthread_mutex_lock(&l->lock);
	uint64_t n = l->total[0] + l->total[1];
	pthread_mutex_unlock(&l->lock);
	return n;
}

static char *jl_tail(struct sb_sink *k, size_t n, size_t *len)
{
	return sb_joblog_tail(jl(k), n, len);
}

static const struct sb_sink_ops joblog_ops = {.write = jl_write, .tail = jl_tail};

void sb_joblog_init(struct sb_joblog *l)
{
	memset(l, 0, sizeof *l);
	l->sink.ops = &joblog_ops;
	l->sink.flood_bytes = SB_JOBLOG_FLOOD;
	pthread_mutex_init(&l->lock, NULL);
}

void sb_joblog_free(struct sb_joblog *l)
{
	free(l->data);
	l->data = NULL;
	l->len = l->cap = 0;
	pthread_mutex_destroy(&l->lock);
}
