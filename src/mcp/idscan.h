/* Finds the "id" member of a JSON-RPC message by streaming over its bytes,
 * without parsing or keeping the message. Used for messages the server will
 * not parse (too long, not UTF-8), so that the error answer still carries the
 * request's id and the client's pending request ends at once instead of
 * waiting for its timeout. O(1) memory. A message with two "id" members
 * has none (which one would the answer name?). */
#ifndef SAGEBOX_MCP_IDSCAN_H
#define SAGEBOX_MCP_IDSCAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define SB_IDSCAN_TOKEN_MAX 256

struct sb_idscan {
	int depth;
	bool in_str, esc, expect_key, key_match;
	bool found;             /* the id's value is in tok; a second "id" key fails */
	int state;
	size_t keylen;
	char tok[SB_IDSCAN_TOKEN_MAX + 2];
	size_t toklen;
	bool tok_is_str;
};

void sb_idscan_init(struct sb_idscan *s);
void sb_idscan_feed(struct sb_idscan *s, const char *data, size_t len);
/* The id found (a string or integer; new reference), or NULL. */
json_t *sb_idscan_id(struct sb_idscan *s);

#endif
