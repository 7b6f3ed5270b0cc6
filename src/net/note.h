/* The one line a run result gets when its output shows a failed name
 * lookup or connection: without it a model reads a 40-line
 * urllib traceback and cannot tell whether to retry. */
#ifndef SAGEBOX_NET_NOTE_H
#define SAGEBOX_NET_NOTE_H

#include <stdbool.h>
#include <stddef.h>

#include "net/allowlist.h"

/* Does text[0, len) show a network failure? Then the note, else NULL
 * (a static string or out). */
const char *sb_net_failure_note(const char *text, size_t len, const struct sb_netlist *l, char *out,
				size_t out_size);

#endif
