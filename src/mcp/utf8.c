#include "mcp/utf8.h"

#include <stdint.h>

bool sb_mcp_utf8_valid(const char *str, size_t len, size_t *bad)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < len) {
		unsigned c = s[i];
		size_t n;
		uint32_t cp, min;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xC2 && c <= 0xDF) {
			n = 1, cp = c & 0x1F, min = 0x80;
		} else if (c >= 0xE0 && c <= 0xEF) {
			n = 2, cp = c & 0x0F, min = 0x800;
		} else if (c >= 0xF0 && c <= 0xF4) {
			n = 3, cp = c & 0x07, min = 0x10000;
		} else {
			goto fail; /* continuation byte, C0/C1 (overlong) or F5..FF */
		}
		if (len - i <= n)
			goto fail; /* truncated sequence */
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				goto fail;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			goto fail;
		i += n + 1;
	}
	return true;
fail:
	if (bad)
		*bad = i;
	return false;
}

size_t sb_mcp_utf8_count(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += (s[i] & 0xC0) != 0x80;
	return n;
}

size_t sb_mcp_utf8_prefix(const char *str, size_t len, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	if (len <= max)
		return len;
	size_t n = max;
	while (n > 0 && (s[n] & 0xC0) == 0x80)
		n--; /* s[n] would be a continuation of the character cut in two */
	return n;
}
