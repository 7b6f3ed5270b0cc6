#ifndef SAGEBOX_UTF8_H
#define SAGEBOX_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when p[0..n) is valid UTF-8 (no overlongs, no surrogates). */
bool sb_utf8_valid(const char *p, size_t n);
/* Length of the valid UTF-8 sequence starting at p (1..4), or 0. */
size_t sb_utf8_seq_len(const unsigned char *p, size_t n);
/* A copy of p[0..n) with each invalid byte replaced by U+FFFD; NUL bytes
 * are kept. Returns NULL on allocation failure; *out_len gets the length. */
char *sb_utf8_sanitize(const char *p, size_t n, size_t *out_len);

#endif
