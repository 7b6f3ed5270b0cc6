#include "transport/linereader.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fd.h"

#define CHUNK (64 * 1024)
#define SHRINK_ABOVE (1024 * 1024)

struct sb_line_reader {
	int fd;
	size_t max;
	char chunk[CHUNK];
	size_t cpos, clen;  /* unread bytes of chunk: [cpos, clen) */
	char *line;         /* the line so far (at most max bytes) */
	size_t len, cap;
	bool overflow;      /* this line passed max: bytes go to the sink */
	size_t total;       /* the full length of an overflowing line */
	bool eof;
};

struct sb_line_reader *sb_line_reader_new(int fd, size_t max_line)
{
	struct sb_line_reader *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->fd = fd;
	r->max = max_line;
	return r;
}

void sb_line_reader_free(struct sb_line_reader *r)
{
	if (!r)
		return;
	free(r->line);
	free(r);
}

static int append(struct sb_line_reader *r, const char *p, size_t n)
{
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		while (cap < r->len + n + 1)
			cap *= 2;
		if (cap > r->max + 1)
			cap = r->max + 1;
		char *nl = realloc(r->line, cap);
		if (!nl)
			return -1;
		r->line = nl;
		r->cap = cap;
	}
	memcpy(r->line + r->len, p, n);
	r->len += n;
	return 0;
}

/* Take bytes of the current chunk up to a newline. Returns true when the
 * line is complete. */
static bool consume(struct sb_line_reader *r, sb_line_sink sink, void *ctx)
{
	const char *start = r->chunk + r->cpos;
	size_t avail = r->clen - r->cpos;
	const char *nl = memchr(start, '\n', avail);
	size_t n = nl ? (size_t)(nl - start) : avail;
	r->cpos += n + (nl ? 1 : 0);

	if (!r->overflow && r->len + n > r->max) {
		/* From here on the line is only streamed to the sink. */
		r->overflow = true;
		r->total = r->len;
		if (sink)
			sink(ctx, r->line ? r->line : "", r->len);
		r->len = 0;
	}
	if (r->overflow) {
		r->total += n;
		if (sink)
			sink(ctx, start, n);
	} else if (append(r, start, n) < 0) {
		/* Out of memory below the cap: treat the line as too long. */
		r->overflow = true;
		r->total = r->len + n;
		r->len = 0;
	}
	return nl != NULL;
}

static void start_line(struct sb_line_reader *r)
{
	r->len = 0;
	r->overflow = false;
	r->total = 0;
	if (r->cap > SHRINK_ABOVE) {
		/* Give back what one big message needed. */
		free(r->line);
		r->line = NULL;
		r->cap = 0;
	}
}

static enum sb_read_status finish(struct sb_line_reader *r, const char **line, size_t *len)
{
	if (r->overflow) {
		*len = r->total;
		*line = NULL;
		return SB_READ_TOO_LONG;
	}
	if (r->len > 0 && r->line[r->len - 1] == '\r')
		r->len--;
	if (append(r, "", 0) < 0) /* room for the NUL */
		return SB_READ_ERROR;
	r->line[r->len] = '\0';
	*line = r->line;
	*len = r->len;
	return SB_READ_LINE;
}

enum sb_read_status sb_line_reader_next(struct sb_line_reader *r, int stop_fd, const char **line,
					size_t *len, sb_line_sink sink, void *ctx)
{
	start_line(r);
	for (;;) {
		while (r->cpos < r->clen)
			if (consume(r, sink, ctx))
				return finish(r, line, len);
		if (r->eof) {
			if (r->len > 0 || r->overflow) {
				enum sb_read_status st = finish(r, line, len);
				r->len = 0;
				r->overflow = false;
				return st;
			}
			return SB_READ_EOF;
		}

		struct pollfd pfd[2] = {{.fd = r->fd, .events = POLLIN}, {.fd = stop_fd, .events = POLLIN}};
		int np = stop_fd >= 0 ? 2 : 1;
		if (SB_RETRY_EINTR(poll(pfd, np, -1)) < 0)
			return SB_READ_ERROR;
		if (np == 2 && pfd[1].revents)
			return SB_READ_STOP;
		if (!pfd[0].revents)
			continue;

		ssize_t n = SB_RETRY_EINTR(read(r->fd, r->chunk, sizeof r->chunk));
		if (n < 0) {
			if (errno == EAGAIN)
				continue;
			return SB_READ_ERROR;
		}
		r->cpos = 0;
		r->clen = (size_t)n;
		if (n == 0)
			r->eof = true;
	}
}
