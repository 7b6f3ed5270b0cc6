/* One workspace, opened: the value the store (store.h) hands out and its
 * journal (journal.h) and sync (sync.h) work on. Apart from the store so
 * that the journal, which the store replays at a hold, needs nothing of it. */
#ifndef SAGEBOX_WORKSPACES_WS_H
#define SAGEBOX_WORKSPACES_WS_H

#include <stdbool.h>
#include <stdint.h>

#define SB_WS_NAME_MAX 64             /* a workspace name's characters */
#define SB_WS_CLIENT_MAX 80           /* "token-" + a token name */

/* One workspace, opened. */
struct sb_ws {
	char client[SB_WS_CLIENT_MAX];
	char name[SB_WS_NAME_MAX + 1];
	int dir_fd;                      /* CLIENT/NAME, O_PATH */
	int files_fd;                    /* CLIENT/NAME/files, O_PATH */
	int lock_fd;                     /* CLIENT/NAME/lock, locked while held; -1 */
	uint64_t cap;                    /* bytes its files may take while held */
	uint64_t bytes;                  /* bytes its files take (allocated) */
	uint64_t entries;                /* files and directories in it */
	bool created;                    /* made by this open */
};

#endif
