#include "util/utf8.h"

#include <stdlib.h>
#include <string.h>

size_t sb_utf8_seq_len(const unsigned char *p, size_t n)
{
	if (n == 0)
		return 0;
	unsigned char c = p[0];
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned min;
	unsigned cp;
	if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; min = 0x80; }
	else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; min = 0x800; }
	else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; min = 0x10000; }
	else return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

bool sb_utf8_valid(const char *p, size_t n, size_t *bad)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t i = 0;
	while (i < n) {
		size_t l = sb_utf8_seq_len(u + i, n - i);
		if (!l) {
			if (bad)
				*bad = i;
			return false;
		}
		i += l;
	}
	return true;
}

size_t sb_utf8_count(const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += (u[i] & 0xC0) != 0x80;
	return c;
}

size_t sb_utf8_prefix(const char *p, size_t n, size_t max)
{
	const unsigned char *u = (const unsigned char *)p;
	if (n <= max)
		return n;
	size_t k = max;
	while (k > 0 && (u[k] & 0xC0) == 0x80)
		k--; /* u[k] would continue the character cut in two */
	return k;
}

char *sb_utf8_sanitize(const char *p, size_t n, size_t *out_len)
{
	const unsigned char *u = (const unsigned char *)p;
	/* Worst case every byte becomes the 3-byte U+FFFD. */
	if (n > ((size_t)-1 - 1) / 3)
		return NULL;
	char *out = malloc(n * 3 + 1);
	if (!out)
		return NULL;
	size_t o = 0, i = 0;
	while (i < n) {
		size_t l = sb_utf8_seq_len(u + i, n - i);
		if (l) {
			memcpy(out + o, p + i, l);
			o += l;
			i += l;
		} else {
			memcpy(out + o, "\xEF\xBF\xBD", 3);
			o += 3;
			i++;
		}
	}
	out[o] = '\0';
	if (out_len)
		*out_len = o;
	return out;
}
