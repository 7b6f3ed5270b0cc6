/* Unit tests of the MCP layer: UTF-8, the audit log's SHA-256, the streaming
 * id scanner, JSON-RPC classification, and a real server and client with no
 * sandbox behind them (runner NULL) answering into a sink that keeps every
 * message: the lifecycle, embedded NULs, tool calls and the audit lines. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config/config.h"
#include "mcp/idscan.h"
#include "mcp/jsonrpc.h"
#include "mcp/audit.h"
#include "mcp/mcp.h"
#include "mcp/server.h"
#include "tools/tool.h"
#include "util/utf8.h"

static void test_utf8(void)
{
	size_t bad = 99;
	CHECK(sb_utf8_valid("", 0, &bad));
	CHECK(sb_utf8_valid("plain ascii", 11, &bad));
	CHECK(sb_utf8_valid("\xcf\x80 \xe2\x89\x88 \xf0\x9f\x98\x80", 11, &bad));  /* π ≈ 😀 */
	CHECK(sb_utf8_valid("\xf4\x8f\xbf\xbf", 4, &bad));                      /* U+10FFFF */
	CHECK(!sb_utf8_valid("a\xff", 2, &bad) && bad == 1);
	CHECK(!sb_utf8_valid("\xc0\xaf", 2, &bad) && bad == 0);                 /* overlong '/' */
	CHECK(!sb_utf8_valid("\xe0\x80\xaf", 3, &bad));                         /* overlong */
	CHECK(!sb_utf8_valid("\xed\xa0\x80", 3, &bad));                         /* surrogate */
	CHECK(!sb_utf8_valid("\xf4\x90\x80\x80", 4, &bad));                     /* > U+10FFFF */
	CHECK(!sb_utf8_valid("ab\xe2\x89", 4, &bad) && bad == 2);               /* truncated */
	CHECK(!sb_utf8_valid("\x80", 1, &bad));                                 /* lone continuation */
	CHECK(sb_utf8_count("\xcf\x80\xf0\x9f\x98\x80x", 7) == 3);
	/* Cutting never splits a character. */
	CHECK(sb_utf8_prefix("a\xf0\x9f\x98\x80", 5, 3) == 1);
	CHECK(sb_utf8_prefix("a\xf0\x9f\x98\x80", 5, 5) == 5);
	CHECK(sb_utf8_prefix("abc", 3, 2) == 2);
}

static void test_sha256(void)
{
	/* The audit log's code hashes (nettle's SHA-256): FIPS 180-2 vectors. */
	char h[65];
	sb_audit_sha256_hex("", 0, h);
	CHECK(!strcmp(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
	sb_audit_sha256_hex("abc", 3, h);
	CHECK(!strcmp(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sb_audit_sha256_hex(two, strlen(two), h);
	CHECK(!strcmp(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
	char *a = malloc(1000000);
	memset(a, 'a', 1000000);
	sb_audit_sha256_hex(a, 1000000, h);
	free(a);
	CHECK(!strcmp(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
	/* Code may hold NUL bytes: all of them are hashed. */
	sb_audit_sha256_hex("a\0b", 3, h);
	CHECK(strcmp(h, "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb") != 0);
	char id1[17], id2[17];
	sb_audit_call_id(id1);
	sb_audit_call_id(id2);
	CHECK(strlen(id1) == 16 && strspn(id1, "0123456789abcdef") == 16 && strcmp(id1, id2) != 0);
}

static json_t *scan(const char *s)
{
	struct sb_idscan sc;
	sb_idscan_init(&sc);
	/* Byte by byte: the scanner must not depend on chunk boundaries. */
	for (const char *p = s; *p; p++)
		sb_idscan_feed(&sc, p, 1);
	return sb_idscan_id(&sc);
}

static void test_idscan(void)
{
	json_t *id;
	id = scan("{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"x\"}");
	CHECK(json_is_integer(id) && json_integer_value(id) == 42);
	json_decref(id);
	id = scan("{\"params\":{\"id\":1,\"code\":\"\\\"id\\\": 7 }\"}, \"id\" : \"req-\\\"9\\\"\"}");
	CHECK(json_is_string(id) && !strcmp(json_string_value(id), "req-\"9\""));
	json_decref(id);
	id = scan("{\"method\":\"x\",\"id\":-3");  /* cut short after the number */
	CHECK(json_is_integer(id) && json_integer_value(id) == -3);
	json_decref(id);
	CHECK(!(id = scan("{\"method\":\"x\",\"params\":{\"id\":5}}")));
	CHECK(!(id = scan("{\"id\":null}")));
	CHECK(!(id = scan("{\"id\":{\"a\":1}}")));
	CHECK(!(id = scan("[{\"id\":1}]")));
	CHECK(!(id = scan("{\"idx\":1,\"xid\":2}")));
	/* Two ids: neither is taken. Another key after the id is fine. */
	CHECK(!(id = scan("{\"id\":1,\"method\":\"x\",\"id\":2}")));
	CHECK(!(id = scan("{\"id\":\"a\",\"id\":\"a\"}")));
	id = scan("{\"id\":8,\"params\":{\"id\":9},\"x\":1e999}");
	CHECK(json_is_integer(id) && json_integer_value(id) == 8);
	json_decref(id);
}

static int kind_of(const char *line, int *code, json_t **id)
{
	struct sb_rpc_msg m;
	sb_rpc_parse(line, strlen(line), &m);
	int k = m.kind;
	*code = m.err_code;
	*id = json_incref(m.id);
	sb_rpc_msg_free(&m);
	return k;
}

static void test_jsonrpc(void)
{
	int code;
	json_t *id;
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &code, &id) == SB_RPC_REQUEST);
	json_decref(id);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &code, &id) ==
	      SB_RPC_NOTIFICATION && !id);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", &code, &id) == SB_RPC_RESPONSE);
	json_decref(id);
	CHECK(kind_of("nope", &code, &id) == SB_RPC_INVALID && code == SB_RPC_PARSE_ERROR && !id);
	CHECK(kind_of("[]", &code, &id) == SB_RPC_INVALID && code == SB_RPC_INVALID_REQUEST);
	CHECK(kind_of("7", &code, &id) == SB_RPC_INVALID && code == SB_RPC_INVALID_REQUEST);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", &code, &id) == SB_RPC_INVALID &&
	      code == SB_RPC_INVALID_REQUEST && !id);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", &code, &id) == SB_RPC_INVALID && !id);
	CHECK(kind_of("{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}", &code, &id) == SB_RPC_INVALID &&
	      code == SB_RPC_INVALID_REQUEST && json_integer_value(id) == 3);
	json_decref(id);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":[1]}", &code, &id) ==
		      SB_RPC_INVALID && code == SB_RPC_INVALID_PARAMS);
	json_decref(id);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"a\",\"method\":\"b\"}", &code, &id) ==
		      SB_RPC_INVALID && code == SB_RPC_PARSE_ERROR && json_integer_value(id) == 5);
	json_decref(id);
	/* Parse errors answer with the id when it can be found. */
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":7001,\"method\":\"tools/call\",\"params\":{\"name\":\"job_output\","
		      "\"arguments\":{\"job_id\":\"j_x\",\"offset\":9223372036854775808}}}", &code, &id) == SB_RPC_INVALID &&
	      code == SB_RPC_PARSE_ERROR && json_integer_value(id) == 7001);
	json_decref(id);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"x\",\"params\":{\"a\":1e999}}", &code, &id) ==
		      SB_RPC_INVALID && code == SB_RPC_PARSE_ERROR && !strcmp(json_string_value(id), "r-1"));
	json_decref(id);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"x\"}", &code, &id) == SB_RPC_INVALID &&
	      code == SB_RPC_PARSE_ERROR && !id);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"x\",\"p\":\"\xff\"}", &code, &id) == SB_RPC_INVALID &&
	      code == SB_RPC_PARSE_ERROR && json_integer_value(id) == 6);
	json_decref(id);

	json_t *e = sb_rpc_error(NULL, -32601, "Method not found", NULL);
	CHECK(json_is_null(json_object_get(e, "id")));
	CHECK(json_integer_value(json_object_get(json_object_get(e, "error"), "code")) == -32601);
	json_decref(e);
}

static void test_nul_rpc(void)
{
	int code;
	json_t *id;
	/* "ping\u0000x" is not ping. */
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\\u0000x\"}", &code, &id) == SB_RPC_INVALID &&
	      code == SB_RPC_INVALID_REQUEST && json_integer_value(id) == 1);
	json_decref(id);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\\u0000\"}", &code, &id) ==
		      SB_RPC_INVALID && code == SB_RPC_INVALID_REQUEST && !id);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\\u0000\",\"id\":2,\"method\":\"ping\"}", &code, &id) == SB_RPC_INVALID &&
	      code == SB_RPC_INVALID_REQUEST);
	json_decref(id);
	/* The parser itself refuses a NUL in a key (an argument name). */
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\","
		      "\"arguments\":{\"code\\u0000x\":\"1\"}}}", &code, &id) == SB_RPC_INVALID &&
	      code == SB_RPC_PARSE_ERROR);
	json_decref(id);
	/* Code may hold NUL: it is bytes with a length, never a C string. */
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\","
		      "\"arguments\":{\"code\":\"print(1)\\u0000\"}}}", &code, &id) == SB_RPC_REQUEST);
	json_decref(id);
}

/* A member's string value, or "". */
static const char *text_of(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* A sink that keeps every message, as a transport would send it. */
struct memsink {
	pthread_mutex_t lock;
	json_t *msgs;
	int done;
};

static int mem_send(void *ctx, const json_t *msg)
{
	struct memsink *m = ctx;
	pthread_mutex_lock(&m->lock);
	json_array_append_new(m->msgs, json_deep_copy(msg));
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static void mem_done(void *ctx)
{
	struct memsink *m = ctx;
	pthread_mutex_lock(&m->lock);
	m->done++;
	pthread_mutex_unlock(&m->lock);
}

static int done_count(struct memsink *m)
{
	pthread_mutex_lock(&m->lock);
	int n = m->done;
	pthread_mutex_unlock(&m->lock);
	return n;
}

/* The answer to request id (a new reference), waiting up to 10 s for it. */
static json_t *answer(struct memsink *m, json_int_t id)
{
	for (int tries = 0; tries < 1000; tries++) {
		pthread_mutex_lock(&m->lock);
		size_t i;
		json_t *msg, *found = NULL;
		json_array_foreach(m->msgs, i, msg) {
			json_t *mid = json_object_get(msg, "id");
			if (json_is_integer(mid) && json_integer_value(mid) == id && !json_object_get(msg, "method"))
				found = json_incref(msg);
		}
		pthread_mutex_unlock(&m->lock);
		if (found)
			return found;
		usleep(10000);
	}
	return NULL;
}

static void say(struct sb_mcp_client *c, const struct sb_mcp_sink *reply, const char *line)
{
	sb_mcp_handle_message(c, line, strlen(line), reply);
}

/* The error message of the answer to id, or NULL if it is no error. */
static bool error_says(struct memsink *m, json_int_t id, int code, const char *needle)
{
	json_t *a = answer(m, id);
	json_t *e = json_object_get(a, "error");
	const char *msg = json_string_value(json_object_get(e, "message"));
	bool ok = e && json_integer_value(json_object_get(e, "code")) == code && msg && strstr(msg, needle);
	if (!ok) {
		char *dump = json_dumps(a, 0);
		fprintf(stderr, "answer %lld: %s\n", (long long)id, dump ? dump : "(none)");
		free(dump);
	}
	json_decref(a);
	return ok;
}

static void test_server(void)
{
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	struct sb_error why = {0};
	snprintf(why.msg, sizeof why.msg, "no sandbox in a unit test");
	struct memsink m = {.msgs = json_array()};
	pthread_mutex_init(&m.lock, NULL);
	struct sb_mcp_sink sink = {.send = mem_send, .done = mem_done, .ctx = &m};
	struct sb_mcp_server *srv = sb_mcp_server_new(&cfg, NULL, &why, NULL);
	struct sb_mcp_client *c = sb_mcp_client_new(srv, "unit", &sink);
	CHECK(srv && c);
	int said = 0;

	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"), said++;
	json_t *a = answer(&m, 1);
	CHECK(json_is_object(json_object_get(a, "result")));
	json_decref(a);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"), said++;
	CHECK(error_says(&m, 2, -32600, "not initialized"));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
		      "\"2025-06-18\\u0000x\",\"capabilities\":{}}}"), said++;
	CHECK(error_says(&m, 3, -32602, "\"protocolVersion\" contains a NUL"));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
		      "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"unit\",\"version\":\"1\"}}}"), said++;
	a = answer(&m, 4);
	CHECK(!strcmp(text_of(json_object_get(a, "result"), "protocolVersion"),
		      "2025-06-18"));
	json_decref(a);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"), said++;

	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\\u0000x\"}"), said++;
	CHECK(error_says(&m, 5, -32600, "\"method\" contains a NUL"));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
		      "\"run_python\\u0000x\",\"arguments\":{\"code\":\"print(1)\"}}}"), said++;
	char *names = sb_tool_names();
	CHECK(error_says(&m, 6, -32602, "tool name contains a NUL") && error_says(&m, 6, -32602, names));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}"), said++;
	CHECK(error_says(&m, 7, -32602, "Unknown tool: nope (the tools are ") && error_says(&m, 7, -32602, names));
	CHECK(!strstr(names, "interact_update"));
	free(names);
	/* The viewer's own tool, from a client that did not declare the MCP
	 * Apps extension: refused before its arguments are looked at. */
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":71,\"method\":\"tools/call\",\"params\":{\"name\":"
		      "\"interact_update\",\"arguments\":{\"session_id\":\"s_x\",\"interact_id\":\"i0\",\"values\":{}}}}"),
		said++;
	CHECK(error_says(&m, 71, -32602, "interact_update is the sagebox viewer's tool") &&
	      error_says(&m, 71, -32602, "did not declare the io.modelcontextprotocol/ui extension"));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"logging/setLevel\",\"params\":{\"level\":"
		      "\"debug\\u0000\"}}"), said++;
	CHECK(error_says(&m, 8, -32602, "\"level\" contains a NUL"));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\",\"params\":{\"cursor\":\"a\\u0000\"}}"),
		said++;
	CHECK(error_says(&m, 9, -32602, "\"cursor\" contains a NUL"));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\","
		      "\"arguments\":{\"code\":\"1\"},\"_meta\":{\"progressToken\":\"t\\u0000\"}}}"), said++;
	CHECK(error_says(&m, 10, -32602, "\"_meta.progressToken\" contains a NUL"));

	/* A call answers from its own thread: with no runner, a sandbox error
	 * result (not a protocol error) that says what to do. */
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\","
		      "\"arguments\":{\"code\":\"print(1)\",\"timeout_seconds\":7}}}"), said++;
	a = answer(&m, 11);
	json_t *r = json_object_get(a, "result");
	CHECK(json_is_true(json_object_get(r, "isError")));
	CHECK_STR_CONTAINS(json_string_value(json_object_get(json_array_get(json_object_get(r, "content"), 0), "text")),
			   "no sandbox in a unit test");
	CHECK(json_integer_value(json_object_get(json_object_get(r, "structuredContent"), "timeout_seconds")) == 7);
	json_decref(a);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_status\"}}"),
		said++;
	a = answer(&m, 12);
	r = json_object_get(json_object_get(a, "result"), "structuredContent");
	CHECK(!strcmp(text_of(json_object_get(r, "mcp"), "protocol_version"),
		      "2025-06-18"));
	/* The text for the model: the verdict first, then why and the details. */
	const char *said_st = text_of(json_array_get(json_object_get(json_object_get(a, "result"), "content"), 0), "text");
	const char *verdict = "sagebox: the sandbox does NOT work here (auto backend).\n"
			      "  why           no sandbox in a unit test\n";
	CHECK(!strncmp(said_st, verdict, strlen(verdict)));
	CHECK_STR_CONTAINS(said_st, ", MCP protocol 2025-06-18");
	json_decref(a);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/list\"}"), said++;
	a = answer(&m, 13);
	json_t *tools = json_object_get(json_object_get(a, "result"), "tools");
	CHECK(json_array_size(tools) == sb_tools_count - 1); /* not the viewer's own */
	for (size_t i = 0; i < json_array_size(tools); i++)
		CHECK(strcmp(text_of(json_array_get(tools, i), "name"), "interact_update"));
	CHECK(json_object_get(json_array_get(tools, 0), "title") && json_object_get(json_array_get(tools, 0), "outputSchema"));
	json_decref(a);

	sb_mcp_client_free(c); /* joins the call threads */
	/* Every message handled was done exactly once. */
	CHECK(done_count(&m) == said);
	sb_mcp_server_free(srv);
	json_decref(m.msgs);
	pthread_mutex_destroy(&m.lock);
}

/* A call that waits for a job slot can be cancelled: it never runs, gets
 * no response, and its sink still hears done exactly once. */
static void test_queued_cancel(void)
{
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	cfg.max_concurrent = 1;
	struct memsink m = {.msgs = json_array()};
	pthread_mutex_init(&m.lock, NULL);
	struct sb_mcp_sink sink = {.send = mem_send, .done = mem_done, .ctx = &m};
	struct sb_mcp_server *srv = sb_mcp_server_new(&cfg, NULL, NULL, NULL);
	struct sb_mcp_client *c = sb_mcp_client_new(srv, "unit", &sink);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}");
	atomic_bool no = false;
	CHECK(sb_mcp_slot_take(srv, "unit", &no)); /* the one slot is busy */
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"run_shell\","
		      "\"arguments\":{\"code\":\"true\"}}}");
	/* The status takes no slot, so it answers while run_shell waits. */
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_status\"}}");
	json_t *a = answer(&m, 3);
	CHECK(a != NULL);
	json_decref(a);
	usleep(100000);
	CHECK(done_count(&m) == 2); /* initialize, status; run_shell still waits */
	json_t *id = json_integer(2);
	sb_mcp_client_cancel(c, id, "unit test");
	sb_mcp_client_cancel(c, id, "again: harmless");
	json_decref(id);
	for (int i = 0; i < 500 && done_count(&m) < 3; i++)
		usleep(10000);
	CHECK(done_count(&m) == 3);
	sb_mcp_slot_give(srv, "unit");
	sb_mcp_client_free(c);
	sb_mcp_server_free(srv);
	pthread_mutex_lock(&m.lock);
	size_t i;
	json_t *msg;
	bool answered2 = false;
	json_array_foreach(m.msgs, i, msg) answered2 = answered2 || json_integer_value(json_object_get(msg, "id")) == 2;
	pthread_mutex_unlock(&m.lock);
	CHECK(!answered2);
	json_decref(m.msgs);
	pthread_mutex_destroy(&m.lock);
}

static json_t *read_lines(const char *path)
{
	json_t *lines = json_array();
	FILE *f = fopen(path, "r");
	char buf[8192];
	while (f && fgets(buf, sizeof buf, f)) {
		json_error_t e;
		json_array_append_new(lines, json_loads(buf, 0, &e));
	}
	if (f)
		fclose(f);
	return lines;
}

static void test_audit(void)
{
	char path[] = "/tmp/sagebox-unit-audit-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	struct sb_audit audit;
	struct sb_error err = {0};
	CHECK(sb_audit_open(&audit, path, &err) == 0);
	struct memsink m = {.msgs = json_array()};
	pthread_mutex_init(&m.lock, NULL);
	struct sb_mcp_sink sink = {.send = mem_send, .ctx = &m};
	struct sb_mcp_server *srv = sb_mcp_server_new(&cfg, NULL, &err, &audit);
	struct sb_mcp_client *c = sb_mcp_client_new(srv, "unit-owner", &sink);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
		      "\"2025-06-18\",\"clientInfo\":{\"name\":\"Unit\",\"version\":\"2.0\"}}}");
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\","
		      "\"arguments\":{\"code\":\"abc\"}}}");
	json_decref(answer(&m, 2));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_status\"}}");
	json_decref(answer(&m, 3));
	sb_mcp_client_free(c);
	sb_mcp_server_free(srv);
	sb_audit_close(&audit);

	json_t *lines = read_lines(path);
	unlink(path);
	CHECK(json_array_size(lines) == 4);
	json_t *s = json_array_get(lines, 0), *f = json_array_get(lines, 1), *st = json_array_get(lines, 2);
	CHECK(!strcmp(text_of(s, "event"), "started"));
	CHECK(!strcmp(text_of(f, "event"), "finished"));
	const char *call = json_string_value(json_object_get(s, "call"));
	CHECK(call && strlen(call) == 16 && !strcmp(call, text_of(f, "call")));
	CHECK(!strcmp(text_of(s, "client"), "unit-owner"));
	CHECK(!strcmp(text_of(s, "client_info"), "Unit 2.0"));
	CHECK(!strcmp(text_of(s, "tool"), "run_python"));
	CHECK(!strcmp(text_of(s, "code_sha256"),
		      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
	CHECK(json_integer_value(json_object_get(s, "code_bytes")) == 3);
	CHECK(!json_object_get(s, "verdict") && !json_object_get(s, "ok"));
	CHECK(json_is_false(json_object_get(f, "ok")) && json_integer_value(json_object_get(f, "timeout_seconds")) == 30);
	CHECK_STR_CONTAINS(json_string_value(json_object_get(f, "verdict")), "sandbox error");
	CHECK(!json_object_get(st, "code_sha256") &&
	      strcmp(text_of(st, "call"), call ? call : "") != 0);
	json_decref(lines);
	json_decref(m.msgs);
	pthread_mutex_destroy(&m.lock);
}

/* A long client name is cut at a character boundary, so the audit line
 * still names the client (a cut inside "é" would not be UTF-8). */
static void test_long_client_name(void)
{
	char path[] = "/tmp/sagebox-unit-audit-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	struct sb_audit audit;
	struct sb_error err = {0};
	CHECK(sb_audit_open(&audit, path, &err) == 0);
	struct memsink m = {.msgs = json_array()};
	pthread_mutex_init(&m.lock, NULL);
	struct sb_mcp_sink sink = {.send = mem_send, .ctx = &m};
	struct sb_mcp_server *srv = sb_mcp_server_new(&cfg, NULL, &err, &audit);
	struct sb_mcp_client *c = sb_mcp_client_new(srv, "unit", &sink);
	json_t *init = json_pack("{s:s, s:i, s:s, s:{s:s, s:{s:s, s:s}}}", "jsonrpc", "2.0", "id", 1, "method",
				 "initialize", "params", "protocolVersion", "2025-06-18", "clientInfo", "name", "x", "version",
				 "1");
	char name[401];
	for (int i = 0; i < 200; i++)
		memcpy(name + 2 * i, "\xc3\xa9", 2);
	name[400] = '\0';
	json_object_set_new(json_object_get(json_object_get(init, "params"), "clientInfo"), "name", json_string(name));
	char *line = json_dumps(init, JSON_COMPACT);
	say(c, &sink, line);
	free(line);
	json_decref(init);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_status\"}}");
	json_decref(answer(&m, 2));
	sb_mcp_client_free(c);
	sb_mcp_server_free(srv);
	sb_audit_close(&audit);
	json_t *lines = read_lines(path);
	unlink(path);
	const char *info = text_of(json_array_get(lines, 0), "client_info");
	CHECK(strlen(info) > 100 && strlen(info) < 160 && strlen(info) % 2 == 0 && !strncmp(info, name, strlen(info)));
	json_decref(lines);
	json_decref(m.msgs);
	pthread_mutex_destroy(&m.lock);
}

/* A sink that also records the code of a request refused before any method
 * ran (what an HTTP transport turns into 400/404). */
struct rejsink {
	struct memsink m;
	int rejected;
};

static void rej_code(void *ctx, int code)
{
	struct rejsink *r = ctx;
	r->rejected = code;
}

static int rej_send(void *ctx, const json_t *msg)
{
	return mem_send(&((struct rejsink *)ctx)->m, msg);
}

static void rej_done(void *ctx)
{
	mem_done(&((struct rejsink *)ctx)->m);
}

#define META "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
	     "\"io.modelcontextprotocol/clientCapabilities\":{}"

/* The 2026-07-28 era: no handshake, _meta on every request, server/discover,
 * removed methods, resultType and serverInfo on results, log messages only
 * when a request asks, ids scoped to a stream. */
static void test_modern(void)
{
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	struct rejsink r = {.m = {.msgs = json_array()}};
	pthread_mutex_init(&r.m.lock, NULL);
	struct sb_mcp_sink sink = {.send = rej_send, .done = rej_done, .rejected = rej_code, .ctx = &r};
	struct sb_error why = {.msg = "no sandbox in a unit test"};
	struct sb_mcp_server *srv = sb_mcp_server_new(&cfg, NULL, &why, NULL);
	struct sb_mcp_client *c = sb_mcp_client_new(srv, "unit", &sink);

	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" META "}}}");
	json_t *a = answer(&r.m, 1), *res = json_object_get(a, "result");
	CHECK(!strcmp(text_of(res, "resultType"), "complete") && r.rejected == 0);
	CHECK(!strcmp(json_string_value(json_array_get(json_object_get(res, "supportedVersions"), 0)), "2026-07-28"));
	CHECK(json_object_get(json_object_get(res, "capabilities"), "tools") && json_object_get(res, "ttlMs"));
	CHECK(!strcmp(text_of(json_object_get(json_object_get(res, "_meta"), "io.modelcontextprotocol/serverInfo"),
			      "name"), "sagebox"));
	json_decref(a);

	/* Required _meta keys missing: -32602, refused before any method. */
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"server/discover\",\"params\":{}}");
	CHECK(error_says(&r.m, 2, -32602, "no \"_meta\"") && r.rejected == -32602);
	r.rejected = 0;
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"_meta\":{"
		      "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}");
	CHECK(error_says(&r.m, 3, -32602, "clientCapabilities") && r.rejected == -32602);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{\"_meta\":{"
		      "\"io.modelcontextprotocol/protocolVersion\":\"1900-01-01\","
		      "\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
	a = answer(&r.m, 4);
	json_t *data = json_object_get(json_object_get(a, "error"), "data");
	CHECK(json_integer_value(json_object_get(json_object_get(a, "error"), "code")) == -32022 &&
	      r.rejected == -32022);
	CHECK(!strcmp(text_of(data, "requested"), "1900-01-01") &&
	      json_array_size(json_object_get(data, "supported")) == 1);
	json_decref(a);
	/* Methods removed in 2026-07-28 do not exist in it. */
	const char *removed[] = {"initialize", "ping", "logging/setLevel"};
	for (int i = 0; i < 3; i++) {
		char line[512];
		r.rejected = 0;
		snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{" META "}}}",
			 10 + i, removed[i]);
		say(c, &sink, line);
		CHECK(error_says(&r.m, 10 + i, -32601, "Method not found") && r.rejected == -32601);
	}
	/* A bad log level is refused; a handler's error is not a refusal. */
	r.rejected = 0;
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"tools/list\",\"params\":{" META
		      ",\"io.modelcontextprotocol/logLevel\":\"loud\"}}}");
	CHECK(error_says(&r.m, 20, -32602, "logLevel") && r.rejected == -32602);
	r.rejected = 0;
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"," META "}}}");
	CHECK(error_says(&r.m, 21, -32602, "Unknown tool") && r.rejected == 0);

	/* The server declares resources, so resources/templates/list answers
	 * (no templates, one page) with the caching hints of its neighbours. */
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"resources/templates/list\",\"params\":{" META "}}}");
	a = answer(&r.m, 22);
	res = json_object_get(a, "result");
	CHECK(json_is_array(json_object_get(res, "resourceTemplates")) &&
	      json_array_size(json_object_get(res, "resourceTemplates")) == 0);
	CHECK(json_integer_value(json_object_get(res, "ttlMs")) > 0 && !strcmp(text_of(res, "cacheScope"), "private"));
	json_decref(a);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":23,\"method\":\"resources/templates/list\",\"params\":{"
		      "\"cursor\":\"x\"," META "}}}");
	CHECK(error_says(&r.m, 23, -32602, "cursor"));

	/* A call: stamped result; no log message unless asked, then before the response. */
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\","
		      "\"arguments\":{\"code\":\"1\"}," META "}}}");
	a = answer(&r.m, 30);
	CHECK(!strcmp(text_of(json_object_get(a, "result"), "resultType"), "complete"));
	json_decref(a);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":31,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\","
		      "\"arguments\":{\"code\":\"1\"}," META ",\"io.modelcontextprotocol/logLevel\":\"info\"}}}");
	json_decref(answer(&r.m, 31));
	pthread_mutex_lock(&r.m.lock);
	int logs_before_31 = 0, logs_total = 0;
	bool seen31 = false;
	size_t i;
	json_t *msg;
	json_array_foreach(r.m.msgs, i, msg) {
		if (!strcmp(text_of(msg, "method"), "notifications/message")) {
			logs_total++;
			logs_before_31 += !seen31;
		}
		if (json_integer_value(json_object_get(msg, "id")) == 31)
			seen31 = true;
	}
	pthread_mutex_unlock(&r.m.lock);
	CHECK(logs_total == 1 && logs_before_31 == 1);
	sb_mcp_client_free(c);
	sb_mcp_server_free(srv);
	json_decref(r.m.msgs);
	pthread_mutex_destroy(&r.m.lock);
}

/* Ids scoped to streams (HTTP): the same id on two streams is two calls, and
 * closing one stream cancels only its call. */
static void test_stream_ids(void)
{
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	cfg.max_concurrent = 1;
	struct memsink m1 = {.msgs = json_array()}, m2 = {.msgs = json_array()};
	pthread_mutex_init(&m1.lock, NULL);
	pthread_mutex_init(&m2.lock, NULL);
	struct sb_mcp_sink s1 = {.send = mem_send, .done = mem_done, .ctx = &m1};
	struct sb_mcp_sink s2 = {.send = mem_send, .done = mem_done, .ctx = &m2};
	struct sb_mcp_server *srv = sb_mcp_server_new(&cfg, NULL, NULL, NULL);
	struct sb_mcp_client *c = sb_mcp_client_new(srv, "unit", &s1);
	atomic_bool no = false;
	CHECK(sb_mcp_slot_take(srv, "unit", &no)); /* both calls wait */
	const char *call = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"run_shell\","
			   "\"arguments\":{\"code\":\"true\"}," META "}}}";
	struct sb_mcp_msg_opts o = {.stream_ids = true};
	sb_mcp_handle_message_opts(c, call, strlen(call), &s1, &o);
	sb_mcp_handle_message_opts(c, call, strlen(call), &s2, &o);
	usleep(100000);
	CHECK(done_count(&m1) == 0 && done_count(&m2) == 0); /* no "id in flight" error */
	sb_mcp_client_cancel_stream(c, &m1, "stream closed");
	for (int i = 0; i < 500 && done_count(&m1) < 1; i++)
		usleep(10000);
	CHECK(done_count(&m1) == 1 && done_count(&m2) == 0 && json_array_size(m1.msgs) == 0);
	sb_mcp_slot_give(srv, "unit");
	json_t *a = answer(&m2, 7);
	CHECK(a && json_object_get(a, "result"));
	json_decref(a);
	sb_mcp_client_free(c);
	sb_mcp_server_free(srv);
	json_decref(m1.msgs);
	json_decref(m2.msgs);
	pthread_mutex_destroy(&m1.lock);
	pthread_mutex_destroy(&m2.lock);
}


/* MCP tasks as far as they go without a sandbox: what each era
 * declares, the errors the specs name, and a task that cannot start (no
 * runner) being the run tool's error result, not a task. */
static void test_tasks(void)
{
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	struct memsink m = {.msgs = json_array()};
	pthread_mutex_init(&m.lock, NULL);
	struct sb_mcp_sink sink = {.send = mem_send, .done = mem_done, .ctx = &m};
	struct sb_error why = {.msg = "no sandbox in a unit test"};
	struct sb_mcp_server *srv = sb_mcp_server_new(&cfg, NULL, &why, NULL);

	/* 2025-06-18: no tasks at all; a "task" in tools/call is ignored. */
	struct sb_mcp_client *c = sb_mcp_client_new(srv, "unit", &sink);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
		      "\"2025-06-18\",\"capabilities\":{}}}");
	json_t *a = answer(&m, 1);
	CHECK(!json_object_get(json_object_get(json_object_get(a, "result"), "capabilities"), "tasks"));
	json_decref(a);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	a = answer(&m, 2);
	CHECK(!json_object_get(json_array_get(json_object_get(json_object_get(a, "result"), "tools"), 0), "execution"));
	json_decref(a);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"x\"}}");
	CHECK(error_says(&m, 3, -32601, "tasks are part of protocol revision 2025-11-25"));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_status\","
		      "\"task\":{}}}");
	a = answer(&m, 4);
	CHECK(json_object_get(json_object_get(a, "result"), "content") != NULL);
	json_decref(a);
	sb_mcp_client_free(c);

	/* 2025-11-25: the capability, taskSupport per tool, the errors. */
	json_array_clear(m.msgs);
	c = sb_mcp_client_new(srv, "unit", &sink);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
		      "\"2025-11-25\",\"capabilities\":{}}}");
	a = answer(&m, 1);
	json_t *want = json_pack("{s:{}, s:{}, s:{s:{s:{}}}}", "list", "cancel", "requests", "tools", "call");
	CHECK(json_equal(json_object_get(json_object_get(json_object_get(a, "result"), "capabilities"), "tasks"), want));
	json_decref(want);
	json_decref(a);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	a = answer(&m, 2);
	size_t i;
	json_t *tool;
	unsigned optional = 0;
	json_array_foreach(json_object_get(json_object_get(a, "result"), "tools"), i, tool) {
		const char *ts = text_of(json_object_get(tool, "execution"), "taskSupport");
		bool run = !strncmp(text_of(tool, "name"), "run_", 4);
		CHECK(!strcmp(ts, run ? "optional" : "forbidden"));
		optional += run;
	}
	CHECK(optional == 3);
	json_decref(a);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"j_nope\"}}");
	CHECK(error_says(&m, 3, -32602, "Failed to retrieve task: Task not found"));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tasks/cancel\",\"params\":{}}");
	CHECK(error_says(&m, 4, -32602, "needs \"taskId\""));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tasks/list\",\"params\":{\"cursor\":\"c\"}}");
	CHECK(error_says(&m, 5, -32602, "unknown cursor"));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tasks/list\"}");
	a = answer(&m, 6);
	CHECK(json_array_size(json_object_get(json_object_get(a, "result"), "tasks")) == 0);
	json_decref(a);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_status\","
		      "\"task\":{}}}");
	CHECK(error_says(&m, 7, -32601, "sandbox_status cannot run as a task"));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\","
		      "\"arguments\":{\"code\":\"1\"},\"task\":{\"ttl\":-1}}}");
	CHECK(error_says(&m, 8, -32602, "\"ttl\""));
	/* No runner: the run tool's sandbox error, as a plain result. */
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\","
		      "\"arguments\":{\"code\":\"1\"},\"task\":{\"ttl\":1000}}}");
	a = answer(&m, 9);
	json_t *res = json_object_get(a, "result");
	CHECK(json_is_true(json_object_get(res, "isError")) && !json_object_get(res, "task"));
	json_decref(a);
	sb_mcp_client_free(c);

	/* 2026-07-28: the extension in server/discover; task methods need it. */
	json_array_clear(m.msgs);
	c = sb_mcp_client_new(srv, "unit", &sink);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" META "}}}");
	a = answer(&m, 1);
	CHECK(json_is_object(json_object_get(json_object_get(json_object_get(json_object_get(a, "result"), "capabilities"),
							    "extensions"), "io.modelcontextprotocol/tasks")));
	json_decref(a);
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"j_x\"," META "}}}");
	CHECK(error_says(&m, 2, -32021, "Missing required client capability"));
	a = answer(&m, 2);
	want = json_pack("{s:{s:{s:{}}}}", "requiredCapabilities", "extensions", "io.modelcontextprotocol/tasks");
	CHECK(json_equal(json_object_get(json_object_get(a, "error"), "data"), want));
	json_decref(want);
	json_decref(a);
#define EXT_META "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
	"\"io.modelcontextprotocol/clientCapabilities\":{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}"
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"j_x\"," EXT_META "}}}");
	CHECK(error_says(&m, 3, -32602, "Task not found"));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tasks/result\",\"params\":{\"taskId\":\"j_x\"," EXT_META "}}}");
	CHECK(error_says(&m, 4, -32601, "not a method of protocol revision 2026-07-28"));
	say(c, &sink, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tasks/list\",\"params\":{" EXT_META "}}}");
	CHECK(error_says(&m, 5, -32601, "not a method of protocol revision 2026-07-28"));
	sb_mcp_client_free(c);
	sb_mcp_server_free(srv);
	json_decref(m.msgs);
	pthread_mutex_destroy(&m.lock);
}

/* A thread that waits for a slot for bob. */
struct taker {
	struct sb_mcp_server *srv;
	const char *owner;
	atomic_bool got, cancel;
};

static void *take_main(void *arg)
{
	struct taker *t = arg;
	atomic_store(&t->got, sb_mcp_slot_take(t->srv, t->owner, &t->cancel));
	return NULL;
}

/* With several clients, one may not hold every job slot: the
 * last stays free for another, and a waiting client that holds fewer goes
 * first. With one client it may use them all. */
static void test_fair_slots(void)
{
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	cfg.max_concurrent = 4;
	struct sb_mcp_server *srv = sb_mcp_server_new(&cfg, NULL, NULL, NULL);
	atomic_bool no = false;
	for (int i = 0; i < 4; i++)
		CHECK(sb_mcp_slot_take(srv, "solo", &no)); /* one client: all four */
	for (int i = 0; i < 4; i++)
		sb_mcp_slot_give(srv, "solo");

	sb_mcp_server_set_clients(srv, 2);
	for (int i = 0; i < 3; i++)
		CHECK(sb_mcp_slot_take(srv, "alice", &no));
	struct taker a4 = {.srv = srv, .owner = "alice"};
	pthread_t ta;
	pthread_create(&ta, NULL, take_main, &a4);
	usleep(100000);
	CHECK(!atomic_load(&a4.got)); /* alice's fourth waits: the last slot is bob's */
	CHECK(sb_mcp_slot_take(srv, "bob", &no)); /* at once */
	/* All four busy; bob (1 held) and alice (3 held) both wait: a slot
	 * alice gives back goes to bob, not to alice's own waiting call. */
	struct taker b2 = {.srv = srv, .owner = "bob"};
	pthread_t tb;
	pthread_create(&tb, NULL, take_main, &b2);
	usleep(100000);
	sb_mcp_slot_give(srv, "alice");
	pthread_join(tb, NULL);
	CHECK(atomic_load(&b2.got) && !atomic_load(&a4.got));
	atomic_store(&a4.cancel, true);
	sb_mcp_slot_wake(srv);
	pthread_join(ta, NULL);
	CHECK(!atomic_load(&a4.got));
	sb_mcp_slot_give(srv, "alice");
	sb_mcp_slot_give(srv, "alice");
	sb_mcp_slot_give(srv, "bob");
	sb_mcp_slot_give(srv, "bob");
	CHECK(srv->running == 0 && srv->users == NULL);
	sb_mcp_server_free(srv);
}

int main(void)
{
	test_utf8();
	test_sha256();
	test_idscan();
	test_jsonrpc();
	test_nul_rpc();
	test_server();
	test_queued_cancel();
	test_audit();
	test_long_client_name();
	test_modern();
	test_stream_ids();
	test_tasks();
	test_fair_slots();
	return check_summary();
}
