/* A workspace's files going somewhere else: into a new session's /work
 * (restore: the host reads the store and sends; the session's controller
 * writes inside its sandbox), and to or from a directory the user names
 * (`sagebox workspaces export|import`). Only regular files and directories
 * travel; a file keeps its data (holes stay holes) and whether it is
 * executable, nothing else of its mode (no setuid, setgid or sticky bit,
 * no owner). Anything else (a symlink, FIFO, socket or device someone put
 * into the store or the directory) is listed as skipped, never opened. */
#ifndef SAGEBOX_WORKSPACES_TRANSFER_H
#define SAGEBOX_WORKSPACES_TRANSFER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "workspaces/store.h"

/* The most bytes one restore chunk carries. */
#define SB_WS_CHUNK (1u << 20)

/* One entry of a restore, in walk order (a directory before what it holds). */
struct sb_ws_item {
	const char *path;     /* relative to the workspace */
	bool dir;
	bool exec;            /* a file: executable */
	uint64_t size;        /* a file's size */
};
/* Called once per entry with n == 0 (its header), then for a file once per
 * chunk of its data extents at offset. Non-zero stops the walk. */
typedef int (*sb_ws_emit_fn)(void *ctx, const struct sb_ws_item *it, uint64_t offset, const char *data, size_t n);

/* Send ws's files (held) through emit. skip (may be NULL) names top-level
 * entries not to send (e.g. "project" where the user's project folder is
 * bound). skipped gets {path, why} of what is not sent (at most
 * SB_WS_SKIPS_SHOWN; *more counts the rest). -1 with err when the store
 * cannot be read or emit stopped. */
int sb_ws_restore_walk(struct sb_ws *ws, const char *skip, sb_ws_emit_fn emit, void *ctx, json_t *skipped,
		       unsigned *more, struct sb_error *err);

/* Copy the tree beneath src into dst (directory fds; dst empty): files
 * made file_mode, or exec_mode when executable; directories dir_mode.
 * Refused (ENOSPC) past max_bytes allocated or max_entries entries; what
 * cannot travel goes into skipped as above. -1 with err: dst holds a part. */
struct sb_ws_copy_modes {
	mode_t file, exec, dir;
};
int sb_ws_copy_tree(int src, int dst, const struct sb_ws_copy_modes *modes, uint64_t max_bytes, uint64_t max_entries,
		    json_t *skipped, unsigned *more, uint64_t *bytes, uint64_t *entries, struct sb_error *err);

#endif
