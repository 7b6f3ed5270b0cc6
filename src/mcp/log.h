/* Logging: every message goes to stderr (never stdout, which is the
 * protocol's), and to the client as notifications/message when it is at or
 * above the level the client chose with logging/setLevel (RFC 5424 levels). */
#ifndef SAGEBOX_MCP_LOG_H
#define SAGEBOX_MCP_LOG_H

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

struct sb_mcp;

/* "debug".."emergency" -> level; -1 for anything else. */
int sb_log_level_parse(const char *name);
const char *sb_log_level_name(enum sb_log_level l);

void sb_mcp_log(struct sb_mcp *s, enum sb_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
