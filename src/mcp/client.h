/* One client's state, and sending to it. Logging: every message goes to
 * stderr (never stdout, which is the protocol's), and to the client as
 * notifications/message when it is at or above the level the client chose
 * with logging/setLevel (RFC 5424 levels). */
#ifndef SAGEBOX_MCP_CLIENT_H
#define SAGEBOX_MCP_CLIENT_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>

#include "mcp/mcp.h"

enum sb_log_level {
	SB_LOG_DEBUG,
	SB_LOG_INFO,
	SB_LOG_NOTICE,
	SB_LOG_WARNING,
	SB_LOG_ERROR,
	SB_LOG_CRITICAL,
	SB_LOG_ALERT,
	SB_LOG_EMERGENCY,
};

/* Before the client chooses a level. */
#define SB_LOG_DEFAULT_CLIENT SB_LOG_INFO
/* What goes to stderr. */
#define SB_LOG_STDERR SB_LOG_INFO

struct sb_calls;

struct sb_mcp_client {
	struct sb_mcp_server *srv;
	char owner[64];                /* sessions, jobs and audit lines are keyed by it */
	struct sb_mcp_sink notify;     /* for messages that answer no request */
	struct sb_calls *calls;        /* tools/call requests in flight */

	pthread_mutex_t lock;          /* guards the fields below */
	/* The handshake era (revisions 2024-11-05 to 2025-11-25). */
	bool initialized;              /* initialize was accepted */
	bool answered;                 /* ... and its response sent: notifications may flow */
	bool client_ready;             /* notifications/initialized arrived */
	const char *revision;          /* negotiated (a static string), NULL before initialize */
	json_t *capabilities;          /* the client's, from initialize (owned) */
	char info[160];                /* clientInfo "name version" */
	enum sb_log_level log_level;   /* the threshold for notifications/message */
};

/* Allocate the state (calls are the protocol's to attach). NULL: no memory. */
struct sb_mcp_client *sb_mcp_client_alloc(struct sb_mcp_server *s, const char *owner,
					  const struct sb_mcp_sink *notify);
void sb_mcp_client_release(struct sb_mcp_client *c);

/* The negotiated revision, or NULL before initialize. */
const char *sb_mcp_client_revision(struct sb_mcp_client *c);

/* Send msg (stolen) through sink. Returns 0, or -1 (peer gone, or msg NULL). */
int sb_mcp_send(const struct sb_mcp_sink *sink, json_t *msg);

/* Tell the sink that nothing more will be sent for its message. */
void sb_mcp_done(const struct sb_mcp_sink *sink);

/* "debug".."emergency" -> level; -1 for anything else. */
int sb_log_level_parse(const char *name);
const char *sb_log_level_name(enum sb_log_level l);

/* Log to stderr and, as notifications/message, to the client's notify sink. */
void sb_mcp_log(struct sb_mcp_client *c, enum sb_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Log about one request of the 2026-07-28 era: to stderr and, only when the
 * request asked for messages (threshold >= 0, its _meta logLevel) and level
 * is at or above it, as notifications/message on the request's own reply
 * sink (never to another stream), before its response. */
void sb_mcp_log_req(const struct sb_mcp_sink *reply, int threshold, enum sb_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Log about one request, on the path it takes: with per_request (a modern
 * request, or one whose client streams logs per request), as
 * sb_mcp_log_req on its reply sink with its threshold; otherwise as
 * sb_mcp_log to the client c. */
void sb_mcp_log_routed(struct sb_mcp_client *c, bool per_request, const struct sb_mcp_sink *reply, int threshold,
		       enum sb_log_level level, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#endif
