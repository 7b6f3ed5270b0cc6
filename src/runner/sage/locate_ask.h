/* locate.c's question, asked: run argv in a sandbox of be and read its
 * one marked line of JSON. */
#ifndef SAGEBOX_LOCATE_ASK_H
#define SAGEBOX_LOCATE_ASK_H

#include <jansson.h>
#include <stddef.h>

#include "config/config.h"
#include "sandbox/sandbox.h"
#include "util/error.h"

/* 1 and *answer (the JSON after the line's mark) when it answered; 0 with
 * said filled when the program did not; -1 with err filled when the
 * sandbox itself could not start (that error is the one to report). */
int sb_locate_ask(const struct sb_backend *be, const struct sb_config *cfg, const char *const *argv, const char *mark,
		  json_t **answer, char *said, size_t sn, struct sb_error *err);

#endif
