/* The driver's modules compiled ahead of time, once per Python: a
 * sandbox's driver otherwise compiles them at every start (~15-20 ms of
 * a warm worker's, a fresh call's or a session's start). The file is made
 * on the host, outside any sandbox and before any job, by the same Python
 * running the embedded driver's `code-cache` mode (worker/bundle.py);
 * never by a sandbox, so no job can put code in a later sandbox's driver.
 *
 * It lives in $XDG_CACHE_HOME/sagebox/driver-code (~/.cache/...; as root
 * without XDG_CACHE_HOME, /var/cache/sagebox/driver-code, which the sandbox
 * user can reach), named after the driver's blob and the Python's file
 * (device, inode, size, mtime): another build or an upgraded Python gets a
 * file of its own. Backends that run the host's Python give it to the
 * driver read-only (native: bound at SB_DRIVER_CODE_MOUNT; host: its
 * path); the driver takes it only when its first line names its own blob
 * and its Python's bytecode, and compiles itself otherwise. */
#ifndef SAGEBOX_DRIVER_CODE_H
#define SAGEBOX_DRIVER_CODE_H

#include <jansson.h>

/* The file for python when it is there; NULL otherwise, and it is then
 * made in the background (once per process and Python file, at low CPU
 * priority) for the sandboxes started after. Thread-safe; the string
 * stays valid for the life of the process. */
const char *sb_driver_code_for(const char *python);

/* Wait up to ms for a file being made to be done (a one-shot `sagebox
 * run`, before it exits: the Python making it dies with us). */
void sb_driver_code_settle(unsigned ms);

/* For status: {"state": "ready"|"making"|"not made"|"failed", "file", "why"}. */
json_t *sb_driver_code_status(const char *python);

#endif
