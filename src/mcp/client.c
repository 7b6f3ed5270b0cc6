#include "mcp/client.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/jsonrpc.h"

struct sb_mcp_client *sb_mcp_client_alloc(struct sb_mcp_server *s, const char *owner,
					  const struct sb_mcp_sink *notify)
{
	struct sb_mcp_client *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->srv = s;
	snprintf(c->owner, sizeof c->owner, "%s", owner);
	c->notify = *notify;
	c->log_level = SB_LOG_DEFAULT_CLIENT;
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

void sb_mcp_client_release(struct sb_mcp_client *c)
{
	if (!c)
		return;
	json_decref(c->capabilities);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

const char *sb_mcp_client_revision(struct sb_mcp_client *c)
{
	pthread_mutex_lock(&c->lock);
	const char *v = c->revision;
	pthread_mutex_unlock(&c->lock);
	return v;
}

int sb_mcp_send(const struct sb_mcp_sink *sink, json_t *msg)
{
	if (!msg)
		return -1;
	int rc = sink->send(sink->ctx, msg);
	json_decref(msg);
	return rc;
}

void sb_mcp_done(const struct sb_mcp_sink *sink)
{
	if (sink->done)
		sink->done(sink->ctx);
}

static const char *const names[] = {"debug", "info", "notice", "warning",
				    "error", "critical", "alert", "emergency"};

int sb_log_level_parse(const char *name)
{
	for (size_t i = 0; name && i < sizeof names / sizeof *names; i++)
		if (!strcmp(name, names[i]))
			return (int)i;
	return -1;
}

const char *sb_log_level_name(enum sb_log_level l)
{
	return (unsigned)l < sizeof names / sizeof *names ? names[l] : "info";
}

static void to_stderr(enum sb_log_level level, const char *msg)
{
	if (level >= SB_LOG_STDERR)
		fprintf(stderr, "sagebox mcp: %s: %s\n", sb_log_level_name(level), msg);
}

static void send_log(const struct sb_mcp_sink *sink, enum sb_log_level level, const char *msg)
{
	json_t *data = sb_rpc_string(msg);
	sb_mcp_send(sink, sb_rpc_notification("notifications/message",
					      json_pack("{s:s, s:s, s:o}", "level", sb_log_level_name(level),
							"logger", "sagebox", "data", data)));
}

/* One log line: to stderr (from SB_LOG_STDERR up), and to the client when
 * it asked for the level: the client c's own level, or (per_request) a
 * request's threshold on its reply sink (2026-07-28: no
 * notifications/message for a request that did not ask, threshold < 0). */
__attribute__((format(printf, 6, 0))) static void vlog(struct sb_mcp_client *c, bool per_request,
							const struct sb_mcp_sink *reply, int threshold,
							enum sb_log_level level, const char *fmt, va_list ap)
{
	char msg[2048];
	vsnprintf(msg, sizeof msg, fmt, ap);
	to_stderr(level, msg);
	if (per_request) {
		if (threshold >= 0 && (int)level >= threshold)
			send_log(reply, level, msg);
		return;
	}
	pthread_mutex_lock(&c->lock);
	bool to_client = c->answered && level >= c->log_level;
	pthread_mutex_unlock(&c->lock);
	if (to_client)
		send_log(&c->notify, level, msg);
}

void sb_mcp_log(struct sb_mcp_client *c, enum sb_log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(c, false, NULL, -1, level, fmt, ap);
	va_end(ap);
}

void sb_mcp_log_req(const struct sb_mcp_sink *reply, int threshold, enum sb_log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(NULL, true, reply, threshold, level, fmt, ap);
	va_end(ap);
}

void sb_mcp_log_routed(struct sb_mcp_client *c, bool per_request, const struct sb_mcp_sink *reply, int threshold,
		       enum sb_log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(c, per_request, reply, threshold, level, fmt, ap);
	va_end(ap);
}
