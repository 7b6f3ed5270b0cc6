/* A bounded reader of newline-delimited messages. A line longer than the
 * cap is not kept: its first cap bytes and then the rest, chunk by chunk, go
 * to a sink (which may look for the request id), and the line is reported as
 * too long once its newline arrives. Memory stays below cap + one chunk
 * whatever the peer sends. */
#ifndef SAGEBOX_TRANSPORT_LINEREADER_H
#define SAGEBOX_TRANSPORT_LINEREADER_H

#include <stddef.h>

enum sb_read_status {
	SB_READ_LINE,     /* *line, *len: one line without its "\n" (and a "\r" before it) */
	SB_READ_TOO_LONG, /* *len: the line's full length; its bytes went to the sink */
	SB_READ_EOF,
	SB_READ_STOP,     /* stop_fd became readable */
	SB_READ_ERROR,    /* errno is set */
};

typedef void (*sb_line_sink)(void *ctx, const char *data, size_t len);

struct sb_line_reader;

struct sb_line_reader *sb_line_reader_new(int fd, size_t max_line);
void sb_line_reader_free(struct sb_line_reader *r);

/* Wait for the next line. stop_fd: -1, or an fd whose readability ends the
 * wait with SB_READ_STOP. The returned line stays valid until the next call;
 * it is NUL-terminated. A last line without a newline is returned before EOF. */
enum sb_read_status sb_line_reader_next(struct sb_line_reader *r, int stop_fd, const char **line,
					size_t *len, sb_line_sink sink, void *ctx);

#endif
