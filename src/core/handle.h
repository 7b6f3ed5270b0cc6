/* Handles: the ids sagebox hands out name the instance that holds them, so
 * a router (HAProxy, Envoy, nginx, an ingress) can send a request to that
 * instance from the id alone, with no state of its own:
 *
 *     KIND _ INSTANCE _ SECRET          e.g. s_node-1_4f0c…(32 hex digits)
 *
 *   KIND      one letter: s a session (session_open), j a background job
 *             (job_start; an MCP task's id is its job's), m an HTTP session
 *             of the handshake era (the Mcp-Session-Id header);
 *   INSTANCE  the `instance` setting: [a-z0-9-]{1,32}, never '_', so the
 *             text between the first two underscores is the instance
 *             (HAProxy: field(2,_));
 *   SECRET    128 random bits in hex: a handle cannot be guessed, whoever
 *             knows the instance's name.
 *
 * A handle is only ever a key to look up: whose it is (its owner) is kept
 * where it is held and checked there, as before. */
#ifndef SAGEBOX_CORE_HANDLE_H
#define SAGEBOX_CORE_HANDLE_H

#include <stdbool.h>
#include <stddef.h>

#define SB_INSTANCE_MAX 32
#define SB_HANDLE_SECRET_HEX 32
/* The longest handle with its NUL. */
#define SB_HANDLE_LEN (2 + SB_INSTANCE_MAX + 1 + SB_HANDLE_SECRET_HEX + 1)

#define SB_HANDLE_SESSION 's'
#define SB_HANDLE_JOB 'j'
#define SB_HANDLE_HTTP 'm'

/* Whether s is a valid instance name: [a-z0-9-]{1,32}. */
bool sb_instance_name_ok(const char *s);

/* The default instance name: this machine's host name (its first label),
 * lowercased, other characters as '-', at most 32; "sagebox" if none is
 * left. */
void sb_instance_default(char out[SB_INSTANCE_MAX + 1]);

/* A new handle of this kind naming instance (which must be valid). 0, or
 * -1 with errno when no random bytes could be had. */
int sb_handle_new(char out[SB_HANDLE_LEN], char kind, const char *instance);

/* Whether id is a well-formed handle of this kind (kind 0: any); when it
 * is, and instance is not NULL, instance gets the instance it names. */
bool sb_handle_parse(const char *id, char kind, char instance[SB_INSTANCE_MAX + 1]);

/* Whether id is a well-formed handle that names an instance other than
 * self (instance gets that name). A value that is no handle is not. */
bool sb_handle_elsewhere(const char *id, const char *self, char instance[SB_INSTANCE_MAX + 1]);

#endif
