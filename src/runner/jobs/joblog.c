#include "runner/jobs/joblog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fd.h"
#include "util/statedir.h"
#include "util/utf8.h"

static struct sb_joblog *jl(struct sb_sink *k)
{
	return (struct sb_joblog *)k;
}

static uint64_t top_of(const struct sb_joblog *l)
{
	return l->total[0] + l->total[1];
}

/* An unnamed file in dir: O_TMPFILE, or (a file system without it) a
 * private name removed at once. */
static int unnamed_file(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	char path[4200];
	snprintf(path, sizeof path, "%s/sagebox-joblog-XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* The ring's file: in the state directory, else in $TMPDIR or /tmp. */
static int open_ring(void)
{
	char dir[4096];
	struct sb_error err = {0};
	int fd = sb_state_dir(dir, sizeof dir, &err) == 0 ? unnamed_file(dir) : -1;
	if (fd < 0) {
		const char *tmp = getenv("TMPDIR");
		fd = unnamed_file(tmp && tmp[0] == '/' ? tmp : "/tmp");
	}
	if (fd < 0)
		fprintf(stderr, "sagebox: cannot create a file for a job's log (%.200s): %s\n",
			err.msg[0] ? err.msg : dir, strerror(errno));
	return fd;
}

static int pwrite_all(int fd, const char *p, size_t n, off_t at)
{
	while (n) {
		ssize_t w = SB_RETRY_EINTR(pwrite(fd, p, n, at));
		if (w <= 0)
			return -1;
		p += w, n -= (size_t)w, at += w;
	}
	return 0;
}

static int jl_write(struct sb_sink *k, enum sb_stream_id st, const char *p, size_t n)
{
	struct sb_joblog *l = jl(k);
	pthread_mutex_lock(&l->lock);
	int rc = 0;
	if (l->fd < 0 && !l->dropped && (l->fd = open_ring()) < 0)
		rc = -1;
	uint64_t at = top_of(l);
	l->total[st] += n;
	if (n > SB_JOBLOG_KEEP) { /* only the last KEEP bytes can be kept */
		at += n - SB_JOBLOG_KEEP;
		p += n - SB_JOBLOG_KEEP;
		n = SB_JOBLOG_KEEP;
	}
	while (rc == 0 && n && !l->dropped) {
		size_t pos = (size_t)(at % SB_JOBLOG_KEEP), chunk = SB_JOBLOG_KEEP - pos;
		chunk = chunk < n ? chunk : n;
		if (pwrite_all(l->fd, p, chunk, (off_t)pos) < 0) {
			fprintf(stderr, "sagebox: cannot write a job's log: %s\n", strerror(errno));
			rc = -1;
		}
		p += chunk, n -= chunk, at += chunk;
	}
	uint64_t top = top_of(l);
	if (rc || l->dropped) /* what was not written is not kept */
		l->base = top;
	else if (top - l->base > SB_JOBLOG_KEEP)
		l->base = top - SB_JOBLOG_KEEP;
	pthread_mutex_unlock(&l->lock);
	return rc;
}

/* A copy of kept bytes [from, to) (offsets), starting and ending at
 * character boundaries, invalid bytes replaced. Under the lock. */
static char *copy_locked(struct sb_joblog *l, uint64_t from, uint64_t to, size_t *len, uint64_t *next)
{
	size_t n = (size_t)(to - from);
	char *raw = malloc(n + 1);
	if (!raw)
		return NULL;
	for (size_t done = 0; done < n;) {
		size_t pos = (size_t)((from + done) % SB_JOBLOG_KEEP), chunk = SB_JOBLOG_KEEP - pos;
		chunk = chunk < n - done ? chunk : n - done;
		ssize_t r = SB_RETRY_EINTR(pread(l->fd, raw + done, chunk, (off_t)pos));
		if (r <= 0) { /* cannot happen unless the disk fails: an empty page */
			n = done;
			break;
		}
		done += (size_t)r;
	}
	const char *p = raw;
	/* A page that begins inside a character skips its continuation bytes;
	 * one that ends inside a character leaves it to the next page. */
	while (n && ((unsigned char)*p & 0xC0) == 0x80 && from > l->base)
		p++, n--, from++;
	if (to < top_of(l))
		n = sb_utf8_prefix(p, n, n);
	*next = from + n;
	char *out = sb_utf8_sanitize(p, n, len);
	free(raw);
	return out;
}

char *sb_joblog_page(struct sb_joblog *l, uint64_t offset, size_t max, size_t *len, uint64_t *next,
		     uint64_t *dropped, uint64_t *end)
{
	pthread_mutex_lock(&l->lock);
	uint64_t top = top_of(l);
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
	uint64_t top = top_of(l);
	uint64_t from = top - l->base > n ? top - n : l->base;
	uint64_t next;
	char *out = copy_locked(l, from, top, len, &next);
	pthread_mutex_unlock(&l->lock);
	return out;
}

uint64_t sb_joblog_bytes(struct sb_joblog *l)
{
	pthread_mutex_lock(&l->lock);
	uint64_t n = top_of(l);
	pthread_mutex_unlock(&l->lock);
	return n;
}

uint64_t sb_joblog_gone(struct sb_joblog *l)
{
	pthread_mutex_lock(&l->lock);
	uint64_t n = l->base;
	pthread_mutex_unlock(&l->lock);
	return n;
}

uint64_t sb_joblog_kept(struct sb_joblog *l)
{
	pthread_mutex_lock(&l->lock);
	uint64_t n = top_of(l) - l->base;
	pthread_mutex_unlock(&l->lock);
	return n;
}

void sb_joblog_drop(struct sb_joblog *l)
{
	pthread_mutex_lock(&l->lock);
	l->dropped = true;
	l->base = top_of(l);
	sb_close(&l->fd);
	pthread_mutex_unlock(&l->lock);
}

bool sb_joblog_was_dropped(struct sb_joblog *l)
{
	pthread_mutex_lock(&l->lock);
	bool d = l->dropped;
	pthread_mutex_unlock(&l->lock);
	return d;
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
	l->fd = -1;
	pthread_mutex_init(&l->lock, NULL);
}

void sb_joblog_free(struct sb_joblog *l)
{
	sb_close(&l->fd);
	pthread_mutex_destroy(&l->lock);
}
