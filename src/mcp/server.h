/* The server's state, shared by the files of the protocol layer (not a
 * public header: others use mcp.h). */
#ifndef SAGEBOX_MCP_SERVER_H
#define SAGEBOX_MCP_SERVER_H

#include <pthread.h>
#include <stdbool.h>

#include "mcp/calls.h"
#include "mcp/log.h"
#include "mcp/mcp.h"
#include "mcp/version.h"

struct sb_mcp {
	const struct sb_config *cfg;
	struct sb_runner *runner;     /* NULL: runner_err says why */
	struct sb_error runner_err;
	struct sb_audit *audit;       /* NULL: no audit log */
	struct sb_mcp_sink sink;
	struct sb_calls *calls;

	pthread_mutex_t lock;         /* guards the fields below */
	bool initialized;             /* initialize was accepted */
	bool answered;                /* ... and its response sent: notifications may flow */
	bool client_ready;            /* notifications/initialized arrived */
	const char *version;          /* negotiated revision (a static string) */
	enum sb_log_level log_level;  /* the client's threshold for notifications/message */
};

/* Send a message (stolen). Thread-safe. */
int sb_mcp_send(struct sb_mcp *s, json_t *msg);
/* The negotiated protocol revision, or NULL before initialize. */
const char *sb_mcp_version(struct sb_mcp *s);
/* Whether a revision has a feature introduced in `since` ("2025-06-18"):
 * revisions are dates, so they order as strings. */
bool sb_mcp_version_has(const char *version, const char *since);

/* The server's instructions for the model (malloc'd). */
char *sb_mcp_instructions(const struct sb_config *cfg);

#endif
