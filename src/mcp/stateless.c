#include "mcp/stateless.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/client.h"
#include "mcp/jsonrpc.h"
#include "mcp/revision.h"
#include "tools/tool.h"
#include "tools/version.h"
#include "util/jsontext.h"
#include "util/utf8.h"

/* How long a client may keep tools/list and server/discover: the tool table
 * is fixed while the server runs, but settings (named in the descriptions)
 * may change with a restart, and the user's packages (named there too)
 * while it runs. "private": the answers are for an
 * authenticated client, not for a shared cache. */
#define CACHE_TTL_MS 300000

static const json_t *meta_of(const json_t *params)
{
	json_t *m = json_object_get(params, "_meta");
	return json_is_object(m) ? m : NULL;
}

__attribute__((format(printf, 3, 4))) static int refuse(struct sb_meta_error *e, int code, const char *fmt, ...)
{
	va_list ap;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	return -1;
}

/* "name version" of clientInfo, cut at a character boundary. */
static void info_text(const json_t *info, char *buf, size_t size)
{
	const char *name = sb_json_text(json_object_get(info, "name"));
	const char *ver = sb_json_text(json_object_get(info, "version"));
	char tmp[512];
	snprintf(tmp, sizeof tmp, "%.200s%s%.200s", name ? name : "", name && ver ? " " : "", ver ? ver : "");
	size_t n = sb_utf8_prefix(tmp, strlen(tmp), size - 1);
	memcpy(buf, tmp, n);
	buf[n] = '\0';
}

int sb_meta_read(const json_t *params, struct sb_meta *m, struct sb_meta_error *e)
{
	memset(m, 0, sizeof *m);
	m->log_level = -1;
	e->data = NULL;
	const json_t *meta = meta_of(params);
	json_t *ver = json_object_get(meta, SB_META_PROTOCOL_VERSION);
	json_t *caps = json_object_get(meta, SB_META_CLIENT_CAPABILITIES);
	if (!meta)
		return refuse(e, SB_RPC_INVALID_PARAMS,
			      "Invalid params: the request has no \"_meta\"; every request of protocol revision "
			      "2026-07-28 carries \"_meta\" with \"" SB_META_PROTOCOL_VERSION "\" and \"" SB_META_CLIENT_CAPABILITIES
			      "\" (or use initialize for an earlier revision)");
	if (!ver || !sb_json_text(ver))
		return refuse(e, SB_RPC_INVALID_PARAMS,
			      "Invalid params: \"_meta\" needs \"" SB_META_PROTOCOL_VERSION "\" (a string without NUL)");
	if (!json_is_object(caps))
		return refuse(e, SB_RPC_INVALID_PARAMS,
			      "Invalid params: \"_meta\" needs \"" SB_META_CLIENT_CAPABILITIES "\" (an object)");
	const char *asked = sb_json_text(ver);
	m->revision = sb_rev_modern(asked);
	if (!m->revision) {
		e->data = json_pack("{s:o, s:s}", "supported", sb_rev_modern_list(), "requested", asked);
		return refuse(e, SB_RPC_UNSUPPORTED_VERSION,
			      "Unsupported protocol version: %.64s (this server speaks 2026-07-28 per request, and "
			      "2024-11-05 to 2025-11-25 through initialize)",
			      asked);
	}
	m->capabilities = caps;
	json_t *level = json_object_get(meta, SB_META_LOG_LEVEL);
	if (level) {
		m->log_level = sb_log_level_parse(sb_json_text(level));
		if (m->log_level < 0)
			return refuse(e, SB_RPC_INVALID_PARAMS,
				      "Invalid params: \"" SB_META_LOG_LEVEL "\" must be one of debug, info, notice, "
				      "warning, error, critical, alert, emergency");
	}
	json_t *info = json_object_get(meta, SB_META_CLIENT_INFO);
	if (json_is_object(info))
		info_text(info, m->info, sizeof m->info);
	return 0;
}

json_t *sb_mcp_server_info(const char *rev)
{
	json_t *info = json_pack("{s:s, s:s, s:s}", "name", "sagebox", "version", SAGEBOX_VERSION, "title",
				 "sagebox: SageMath, Python and shell in a sandbox");
	if (sb_rev_has(rev, SB_REV_SERVER_DESCRIPTION))
		json_object_set_new(info, "description",
				    json_string("Runs SageMath, Python and shell code written by a model in an "
						"isolated local sandbox, with no network and no host files."));
	return info;
}

void sb_stateless_stamp(json_t *result, const char *rev)
{
	if (!result || !sb_rev_has(rev, SB_REV_STATELESS))
		return;
	if (!json_object_get(result, "resultType")) /* a CreateTaskResult says "task" */
		json_object_set_new(result, "resultType", json_string("complete"));
	json_t *meta = json_object_get(result, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(result, "_meta", meta);
	}
	json_object_set_new(meta, SB_META_SERVER_INFO,
			    json_pack("{s:s, s:s}", "name", "sagebox", "version", SAGEBOX_VERSION));
}

void sb_stateless_cache_hints(json_t *result, const char *rev)
{
	if (!result || !sb_rev_has(rev, SB_REV_CACHE_HINTS))
		return;
	json_object_set_new(result, "ttlMs", json_integer(CACHE_TTL_MS));
	json_object_set_new(result, "cacheScope", json_string("private"));
}

json_t *sb_mcp_discover(const struct sb_config *cfg, const char *rev)
{
	/* logging: a request may ask for log messages with _meta .../logLevel. */
	/* extensions: the tasks extension (mcp/tasks.h), with no settings; the
	 * MCP Apps one is added for a client that declares it (mcp/resources.h). */
	json_t *r = json_pack("{s:o, s:{s:{s:b}, s:{}, s:{}, s:{s:{}}}}", "supportedVersions", sb_rev_modern_list(),
			      "capabilities", "tools", "listChanged", 0, "logging", "resources", "extensions",
			      "io.modelcontextprotocol/tasks");
	char *instructions = sb_tools_instructions(cfg);
	if (instructions)
		json_object_set_new(r, "instructions", json_string(instructions));
	free(instructions);
	sb_stateless_cache_hints(r, rev);
	return r;
}
