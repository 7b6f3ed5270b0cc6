#include "mcp/idscan.h"

#include <string.h>

enum { S_IDLE, S_KEY, S_COLON, S_VALUE_START, S_VALUE, S_FAIL };

void sb_idscan_init(struct sb_idscan *s)
{
	memset(s, 0, sizeof *s);
	s->state = S_IDLE;
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void push(struct sb_idscan *s, char c)
{
	if (s->toklen >= SB_IDSCAN_TOKEN_MAX) {
		s->state = S_FAIL;
		return;
	}
	s->tok[s->toklen++] = c;
}

static void step(struct sb_idscan *s, char c)
{
	if (s->state == S_VALUE) {
		if (s->tok_is_str) {
			push(s, c);
			if (s->state == S_FAIL)
				return;
			if (s->esc)
				s->esc = false;
			else if (c == '\\')
				s->esc = true;
			else if (c == '"')
				s->state = S_IDLE, s->found = true;
			return;
		}
		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' || c == '.' || c == 'E') {
			push(s, c);
			return;
		}
		s->state = S_IDLE; /* and c is read as the text after the value */
		s->found = true;
	}
	if (s->state == S_VALUE_START) {
		if (is_ws(c))
			return;
		s->tok_is_str = c == '"';
		s->esc = false;
		s->state = S_VALUE;
		push(s, c);
		return;
	}
	if (s->in_str) {
		if (s->esc) {
			s->esc = false;
			s->key_match = false; /* an escaped key is never taken for "id" */
		} else if (c == '\\') {
			s->esc = true;
			s->key_match = false;
		} else if (c == '"') {
			s->in_str = false;
			if (s->state == S_KEY)
				s->state = !(s->key_match && s->keylen == 2) ? S_IDLE
					   : s->found ? S_FAIL /* a second "id": which one is meant? */
						      : S_COLON;
		} else if (s->state == S_KEY) {
			if (s->keylen >= 2 || c != "id"[s->keylen])
				s->key_match = false;
			s->keylen++;
		}
		return;
	}
	switch (c) {
	case '"':
		s->in_str = true;
		if (s->depth == 1 && s->expect_key) {
			s->state = S_KEY;
			s->keylen = 0;
			s->key_match = true;
		}
		s->expect_key = false;
		break;
	case '{':
	case '[':
		s->depth++;
		s->expect_key = s->depth == 1 && c == '{';
		break;
	case '}':
	case ']':
		s->depth--;
		break;
	case ',':
		s->expect_key = s->depth == 1;
		break;
	case ':':
		if (s->depth == 1 && s->state == S_COLON)
			s->state = S_VALUE_START;
		break;
	default:
		break;
	}
}

void sb_idscan_feed(struct sb_idscan *s, const char *data, size_t len)
{
	/* On past the id, to the end: a second "id" makes it ambiguous. */
	for (size_t i = 0; i < len && s->state != S_FAIL; i++)
		step(s, data[i]);
}

json_t *sb_idscan_id(struct sb_idscan *s)
{
	/* (a message cut short right after a numeric id still has it) */
	if (s->state == S_FAIL || (!s->found && !(s->state == S_VALUE && !s->tok_is_str)))
		return NULL;
	json_error_t e;
	json_t *v = json_loadb(s->tok, s->toklen, JSON_DECODE_ANY, &e);
	if (v && (json_is_string(v) || json_is_integer(v)))
		return v;
	json_decref(v);
	return NULL;
}
