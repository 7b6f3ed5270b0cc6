/* SHA-256 (FIPS 180-4), for the audit log's code hashes. A plain public-domain
 * style implementation: no dependency for one hash per tool call. */
#ifndef SAGEBOX_MCP_SHA256_H
#define SAGEBOX_MCP_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sb_sha256 {
	uint32_t h[8];
	uint64_t bytes;
	unsigned char block[64];
	size_t fill;
};

void sb_sha256_init(struct sb_sha256 *c);
void sb_sha256_update(struct sb_sha256 *c, const void *data, size_t len);
void sb_sha256_final(struct sb_sha256 *c, unsigned char digest[32]);
/* Hash of data as 64 lowercase hex digits and a NUL. */
void sb_sha256_hex(const void *data, size_t len, char hex[65]);

#endif
