/* Fuzz target: the stdio transport's line reader (transport/linereader.c),
 * the first code that touches a client's bytes.
 *
 * Input: byte 0 picks the line cap, byte 1 the size of the reads the reader
 * gets (each is one SOCK_SEQPACKET packet, so read boundaries are exactly
 * these whatever the scheduling), the rest is the stream. Every result is
 * checked against a plain split of the input on "\n": a line within the cap
 * comes back whole (one "\r" before its "\n" dropped), a longer one is
 * reported too long with its full length and all of its bytes went to the
 * sink, and the stream ends in EOF. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/linereader.h"
#include "util/buf.h"
#include "util/fd.h"

struct feed {
	int fd;
	const uint8_t *data;
	size_t size, piece;
};

static void *writer(void *arg)
{
	struct feed *f = arg;
	for (size_t off = 0; off < f->size;) {
		size_t n = f->size - off < f->piece ? f->size - off : f->piece;
		if (SB_RETRY_EINTR(send(f->fd, f->data + off, n, MSG_NOSIGNAL)) != (ssize_t)n)
			abort();
		off += n;
	}
	shutdown(f->fd, SHUT_WR);
	return NULL;
}

static void sink(void *ctx, const char *data, size_t len)
{
	if (sb_buf_append(ctx, data, len) < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	/* Small caps reach the too-long path often; some larger ones too. */
	size_t max = data[0] < 200 ? (size_t)data[0] + 1 : (size_t)(data[0] - 199) * 1000;
	size_t piece = data[1] ? data[1] : 65536;
	data += 2;
	size -= 2;

	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	SB_AUTO_FD rd = sv[0];
	SB_AUTO_FD wr = sv[1];
	struct feed f = {wr, data, size, piece};
	pthread_t th;
	if (pthread_create(&th, NULL, writer, &f))
		abort();
	struct sb_line_reader *r = sb_line_reader_new(rd, max);
	if (!r)
		abort();

	/* The expected lines: the input split on "\n", a last empty piece dropped. */
	const uint8_t *p = data, *end = data + size;
	SB_AUTO_BUF spill = {0};
	for (;;) {
		const uint8_t *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		size_t raw = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *line;
		size_t len;
		spill.len = 0;
		enum sb_read_status st = sb_line_reader_next(r, -1, &line, &len, sink, &spill);
		if (!nl && raw == 0) {
			if (st != SB_READ_EOF)
				abort();
			break;
		}
		if (raw > max) {
			if (st != SB_READ_TOO_LONG || len != raw || spill.len != raw || memcmp(spill.data, p, raw))
				abort();
		} else {
			size_t want = raw > 0 && p[raw - 1] == '\r' ? raw - 1 : raw;
			if (st != SB_READ_LINE || len != want || memcmp(line, p, want) || line[len] != '\0' ||
			    spill.len != 0)
				abort();
		}
		if (!nl) {
			/* The last line had no newline: EOF comes next. */
			if (sb_line_reader_next(r, -1, &line, &len, sink, &spill) != SB_READ_EOF)
				abort();
			break;
		}
		p = nl + 1;
	}
	sb_line_reader_free(r);
	pthread_join(th, NULL);
	return 0;
}
