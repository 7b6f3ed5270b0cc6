/* A growable byte buffer. */
#ifndef SAGEBOX_BUF_H
#define SAGEBOX_BUF_H

#include <stddef.h>

struct sb_buf {
	char *data; /* always NUL-terminated when non-NULL */
	size_t len, cap;
};

int sb_buf_append(struct sb_buf *b, const void *p, size_t n);
int sb_buf_printf(struct sb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_buf_free(struct sb_buf *b);
/* Hand the data over (caller frees); the buffer is empty afterwards. */
char *sb_buf_steal(struct sb_buf *b, size_t *len);

static inline void sb_buf_freep(struct sb_buf *b) { sb_buf_free(b); }
#define SB_AUTO_BUF __attribute__((cleanup(sb_buf_freep))) struct sb_buf

#endif
