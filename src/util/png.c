#include "util/png.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
/* A chunk: 4-byte length, 4-byte type, data, 4-byte CRC. */
enum { CHUNK_OVERHEAD = 12, IHDR_LEN = 13, MAX_CHUNK_LEN = 0x7fffffff };

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool letters(const unsigned char *t)
{
	for (int i = 0; i < 4; i++)
		if (!((t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z')))
			return false;
	return true;
}

/* The bit depths each colour type allows (PNG spec, table 11.1). */
static bool depth_ok(unsigned type, unsigned depth)
{
	switch (type) {
	case 0:
		return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;
	case 3:
		return depth == 1 || depth == 2 || depth == 4 || depth == 8;
	case 2:
	case 4:
	case 6:
		return depth == 8 || depth == 16;
	default:
		return false;
	}
}

static int fail(char *why, size_t whyn, const char *what)
{
	snprintf(why, whyn, "%s", what);
	return -1;
}

int sb_png_check(const void *data, size_t len, uint32_t *width, uint32_t *height, char *why, size_t whyn)
{
	const unsigned char *p = data;
	if (len < sizeof signature || memcmp(p, signature, sizeof signature))
		return fail(why, whyn, "no PNG signature");
	size_t off = sizeof signature;
	if (len - off < CHUNK_OVERHEAD + IHDR_LEN || be32(p + off) != IHDR_LEN || memcmp(p + off + 4, "IHDR", 4))
		return fail(why, whyn, "no IHDR chunk first");
	const unsigned char *h = p + off + 8;
	uint32_t w = be32(h), ht = be32(h + 4);
	if (w == 0 || ht == 0 || w > MAX_CHUNK_LEN || ht > MAX_CHUNK_LEN)
		return fail(why, whyn, "bad dimensions in IHDR");
	if (!depth_ok(h[9], h[8]) || h[10] != 0 || h[11] != 0 || h[12] > 1)
		return fail(why, whyn, "bad IHDR fields");
	bool idat = false, end = false;
	while (off < len) {
		if (end)
			return fail(why, whyn, "bytes after IEND");
		if (len - off < CHUNK_OVERHEAD)
			return fail(why, whyn, "a truncated chunk");
		uint32_t n = be32(p + off);
		const unsigned char *type = p + off + 4;
		if (n > MAX_CHUNK_LEN || n > len - off - CHUNK_OVERHEAD)
			return fail(why, whyn, "a chunk longer than the file");
		if (!letters(type))
			return fail(why, whyn, "a chunk type that is not four letters");
		if (!memcmp(type, "IDAT", 4))
			idat = true;
		else if (!memcmp(type, "IEND", 4))
			end = true;
		off += CHUNK_OVERHEAD + n;
	}
	if (!end)
		return fail(why, whyn, "no IEND chunk");
	if (!idat)
		return fail(why, whyn, "no image data");
	*width = w;
	*height = ht;
	return 0;
}
