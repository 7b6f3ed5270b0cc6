/* Fuzz target: the whole MCP message path of one client, as the stdio
 * transport drives it: a real server and client (no runner behind them, so
 * a run tool answers with its sandbox error after its arguments were
 * checked), JSON-RPC classification, the lifecycle, every method, tool
 * lookup and argument validation, call threads, cancellation, log
 * notifications and the audit log's lines.
 *
 * Input: byte 0 holds flags (bit 0: the harness sends initialize and
 * notifications/initialized first, so mutations start past the handshake;
 * bit 1: logging/setLevel debug too, so every log line becomes a
 * notification), then messages, one per line. A line longer than LINE_MAX
 * takes the transport's too-long path, with the id its scanner finds.
 *
 * Checked: every message the server sends can be serialised (stdio would
 * otherwise drop it and leave the client waiting), and every message
 * handled is done exactly once, after the client's calls are joined. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "mcp/audit.h"
#include "mcp/idscan.h"
#include "mcp/mcp.h"

#define LINE_MAX_BYTES 4096

struct sink {
	pthread_mutex_t lock;
	unsigned done;
};

static int discard(void *ctx, const json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(15));
	if (!text)
		abort();
	free(text);
	return 0;
}

static void done(void *ctx)
{
	struct sink *s = ctx;
	pthread_mutex_lock(&s->lock);
	s->done++;
	pthread_mutex_unlock(&s->lock);
}

static void say(struct sb_mcp_client *c, const struct sb_mcp_sink *reply, const char *line)
{
	sb_mcp_handle_message(c, line, strlen(line), reply);
}

static struct sb_audit audit;
static struct sb_config cfg;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sb_error err = {0};
	sb_config_defaults(&cfg);
	cfg.max_concurrent = 2;
	/* The audit lines are built and written for real, to nowhere. */
	if (sb_audit_open(&audit, "/dev/null", &err) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned flags = data[0];
	data++;
	size--;

	struct sb_error why = {0};
	snprintf(why.msg, sizeof why.msg, "no sandbox while fuzzing");
	snprintf(why.hint, sizeof why.hint, "none");
	struct sink s = {.done = 0};
	pthread_mutex_init(&s.lock, NULL);
	const struct sb_mcp_sink sink = {.send = discard, .done = done, .ctx = &s};
	struct sb_mcp_server *srv = sb_mcp_server_new(&cfg, NULL, &why, &audit);
	struct sb_mcp_client *c = srv ? sb_mcp_client_new(srv, "fuzz", &sink) : NULL;
	if (!c)
		abort();
	unsigned handled = 0;
	if (flags & 1) {
		say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
			      "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}");
		say(c, &sink, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
		handled += 2;
		if (flags & 2) {
			say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":\"level\",\"method\":\"logging/setLevel\","
				      "\"params\":{\"level\":\"debug\"}}");
			handled++;
		}
	}
	const uint8_t *p = data, *end = data + size;
	while (p < end) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (len > LINE_MAX_BYTES) {
			struct sb_idscan scan;
			sb_idscan_init(&scan);
			sb_idscan_feed(&scan, (const char *)p, len);
			json_t *id = sb_idscan_id(&scan);
			sb_mcp_handle_oversize(c, len, LINE_MAX_BYTES, id, &sink);
			json_decref(id);
		} else {
			sb_mcp_handle_message(c, (const char *)p, len, &sink);
		}
		handled++;
		sb_mcp_client_idle(c);
		p = nl ? nl + 1 : end;
	}
	sb_mcp_client_free(c);
	sb_mcp_server_free(srv);
	if (s.done != handled)
		abort();
	pthread_mutex_destroy(&s.lock);
	return 0;
}
