#ifndef SAGEBOX_UTF8_H
#define SAGEBOX_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when p[0..n) is well-formed UTF-8 (RFC 3629: no overlong forms, no
 * UTF-16 surrogates, nothing above U+10FFFF). Otherwise *bad (may be NULL)
 * is the offset of the first byte that is not. */
bool sb_utf8_valid(const char *p, size_t n, size_t *bad);
/* Code points in well-formed UTF-8 (counts lead bytes). */
size_t sb_utf8_count(const char *p, size_t n);
/* The longest prefix of p[0..n) of at most max bytes that ends on a
 * character boundary. */
size_t sb_utf8_prefix(const char *p, size_t n, size_t max);
/* Length of the valid UTF-8 sequence starting at p (1..4), or 0. */
size_t sb_utf8_seq_len(const unsigned char *p, size_t n);
/* A copy of p[0..n) with each invalid byte replaced by U+FFFD; NUL bytes
 * are kept. Returns NULL on allocation failure; *out_len gets the length. */
char *sb_utf8_sanitize(const char *p, size_t n, size_t *out_len);

#endif
