/* Strict UTF-8 (RFC 3629) for the protocol layer: JSON text must be UTF-8, and
 * schema bounds on strings count Unicode code points, not bytes. */
#ifndef SAGEBOX_MCP_UTF8_H
#define SAGEBOX_MCP_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..len) is well-formed UTF-8: no overlong forms, no UTF-16
 * surrogates, nothing above U+10FFFF. Otherwise *bad (may be NULL) is the
 * offset of the first byte that is not. */
bool sb_mcp_utf8_valid(const char *s, size_t len, size_t *bad);

/* Code points in well-formed UTF-8 (counts lead bytes). */
size_t sb_mcp_utf8_count(const char *s, size_t len);

/* The longest prefix of s[0..len) of at most max bytes that ends on a
 * character boundary. */
size_t sb_mcp_utf8_prefix(const char *s, size_t len, size_t max);

#endif
