/* Bearer tokens of the HTTP transport: each token is one client (its name
 * is the client's owner id, by which its calls, sessions and audit lines are
 * kept apart from every other client's). Either a file of tokens
 * (--token-file: one per line, "name:token" or a bare token) or one token
 * generated at first start into $XDG_STATE_HOME/sagebox/token (mode 0600). */
#ifndef SAGEBOX_TRANSPORT_HTTP_AUTH_H
#define SAGEBOX_TRANSPORT_HTTP_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define SB_TOKEN_MIN_CHARS 16
#define SB_TOKEN_MAX_CHARS 256

struct sb_http_token {
	char name[64];              /* the client's owner id */
	uint8_t digest[32];         /* SHA-256 of the token: compared in constant time */
};

struct sb_http_tokens {
	struct sb_http_token *v;
	size_t n;
};

/* Read a token file. Refuses a file that others may read or write, lines
 * that are not "name:token" or a token, tokens shorter than
 * SB_TOKEN_MIN_CHARS, and repeated names or tokens. */
int sb_http_tokens_load(const char *path, struct sb_http_tokens *t, struct sb_error *err);

/* The default token: $XDG_STATE_HOME/sagebox/token (or
 * ~/.local/state/sagebox/token), made with 256 random bits at first use.
 * path receives where it is. The client's name is "default". */
int sb_http_tokens_default(char *path, size_t size, struct sb_http_tokens *t, struct sb_error *err);

void sb_http_tokens_free(struct sb_http_tokens *t);

/* The token presented (the bytes after "Bearer "), or NULL when it is none
 * of them. Every token is compared, each in constant time, so the time
 * taken says nothing about how much of a token was right. */
const struct sb_http_token *sb_http_tokens_match(const struct sb_http_tokens *t, const char *presented, size_t len);

#endif
