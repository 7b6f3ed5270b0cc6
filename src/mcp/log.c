#include "mcp/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mcp/jsonrpc.h"
#include "mcp/server.h"

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

void sb_mcp_log(struct sb_mcp *s, enum sb_log_level level, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);

	if (level >= SB_LOG_STDERR)
		fprintf(stderr, "sagebox mcp: %s: %s\n", sb_log_level_name(level), msg);

	pthread_mutex_lock(&s->lock);
	bool to_client = s->answered && level >= s->log_level;
	pthread_mutex_unlock(&s->lock);
	if (!to_client)
		return;
	json_t *data = sb_rpc_string(msg);
	sb_mcp_send(s, sb_rpc_notification("notifications/message",
					   json_pack("{s:s, s:s, s:o}", "level", sb_log_level_name(level),
						     "logger", "sagebox", "data", data)));
}
