/* The shape of a PNG file, checked without decoding it: the signature, an
 * IHDR chunk first with sane fields, chunks that tile the file exactly and
 * an IEND chunk last. The host applies it to every figure a job sends: the
 * bytes come from inside the sandbox and are never trusted. */
#ifndef SAGEBOX_PNG_H
#define SAGEBOX_PNG_H

#include <stddef.h>
#include <stdint.h>

/* 0 and the dimensions from IHDR, or -1 with why (a short phrase such as
 * "no PNG signature"). */
int sb_png_check(const void *data, size_t len, uint32_t *width, uint32_t *height, char *why, size_t whyn);

#endif
