/* Unit tests of the HTTP transport's parts that need no socket: the token
 * file and its checks, the constant-time token match, Host/Origin, the
 * 2026-07-28 header mirrors, and whole requests through sb_http_core_handle
 * (the fuzzer's entry point) against a real MCP server with no sandbox. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "config/config.h"
#include "mcp/mcp.h"
#include "transport/http.h"
#include "transport/http_core.h"

static char *write_tmp(const char *text, mode_t mode)
{
	char *path = strdup("/tmp/sagebox-unit-tokens-XXXXXX");
	int fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	fchmod(fd, mode);
	close(fd);
	return path;
}

static int load(const char *text, mode_t mode, struct sb_http_tokens *t, struct sb_error *err)
{
	char *p = write_tmp(text, mode);
	memset(t, 0, sizeof *t);
	int rc = sb_http_tokens_load(p, t, err);
	unlink(p);
	free(p);
	return rc;
}

static void test_tokens(void)
{
	struct sb_http_tokens t;
	struct sb_error err = {0};
	CHECK(load("# team\nalice:aaaaaaaaaaaaaaaaaaaa\n\n  bbbbbbbbbbbbbbbbbbbb  \r\n", 0600, &t, &err) == 0 && t.n == 2);
	CHECK(!strcmp(t.v[0].name, "alice") && !strcmp(t.v[1].name, "client-2"));
	CHECK(sb_http_tokens_match(&t, "aaaaaaaaaaaaaaaaaaaa", 20) == &t.v[0]);
	CHECK(sb_http_tokens_match(&t, "bbbbbbbbbbbbbbbbbbbb", 20) == &t.v[1]);
	CHECK(!sb_http_tokens_match(&t, "aaaaaaaaaaaaaaaaaaa", 19));
	CHECK(!sb_http_tokens_match(&t, "aaaaaaaaaaaaaaaaaaaaa", 21));
	CHECK(!sb_http_tokens_match(&t, "", 0));
	sb_http_tokens_free(&t);
	/* Readable by others, too short, spaces, names and tokens twice, empty. */
	CHECK(load("alice:aaaaaaaaaaaaaaaaaaaa\n", 0644, &t, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "other users");
	CHECK(load("alice:short\n", 0600, &t, &err) < 0);
	CHECK(load("alice:aaaaaaaaaa aaaaaaaaaa\n", 0600, &t, &err) < 0);
	CHECK(load("a:aaaaaaaaaaaaaaaaaaaa\na:bbbbbbbbbbbbbbbbbbbb\n", 0600, &t, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "used twice");
	CHECK(load("a:aaaaaaaaaaaaaaaaaaaa\nb:aaaaaaaaaaaaaaaaaaaa\n", 0600, &t, &err) < 0);
	CHECK(load("bad name:aaaaaaaaaaaaaaaaaaaa\n", 0600, &t, &err) < 0);
	CHECK(load("# nothing\n", 0600, &t, &err) < 0);
	CHECK(load("", 0600, &t, &err) < 0);

	/* The generated default: made once, mode 0600, then reused. */
	char dir[] = "/tmp/sagebox-unit-state-XXXXXX", path[4096], again[4096];
	CHECK(mkdtemp(dir) != NULL);
	setenv("XDG_STATE_HOME", dir, 1);
	memset(&t, 0, sizeof t);
	CHECK(sb_http_tokens_default(path, sizeof path, &t, &err) == 0 && t.n == 1);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == 65);
	struct sb_http_tokens t2 = {0};
	CHECK(sb_http_tokens_default(again, sizeof again, &t2, &err) == 0);
	CHECK(!memcmp(t.v[0].digest, t2.v[0].digest, 32));
	sb_http_tokens_free(&t);
	sb_http_tokens_free(&t2);
	unlink(path);
	char sub[4200];
	snprintf(sub, sizeof sub, "%s/sagebox", dir);
	rmdir(sub);
	rmdir(dir);
}

static void test_guard(void)
{
	char why[256];
	struct sb_http_bind lo = {.addr = "127.0.0.1", .port = 8080, .loopback = true};
	CHECK(sb_http_check_host(&lo, "127.0.0.1:8080", why, sizeof why) == 0);
	CHECK(sb_http_check_host(&lo, "localhost", why, sizeof why) == 0);
	CHECK(sb_http_check_host(&lo, "[::1]:8080", why, sizeof why) == 0);
	CHECK(sb_http_check_host(&lo, "evil.example:8080", why, sizeof why) < 0);
	CHECK(sb_http_check_host(&lo, "127.0.0.1.evil.example", why, sizeof why) < 0);
	CHECK(sb_http_check_host(&lo, NULL, why, sizeof why) < 0);
	CHECK(sb_http_check_host(&lo, "::1", why, sizeof why) < 0); /* unbracketed */
	CHECK(sb_http_check_origin(&lo, NULL, why, sizeof why) == 0);
	CHECK(sb_http_check_origin(&lo, "http://localhost:3000", why, sizeof why) == 0);
	CHECK(sb_http_check_origin(&lo, "https://127.0.0.1", why, sizeof why) == 0);
	CHECK(sb_http_check_origin(&lo, "null", why, sizeof why) < 0);
	CHECK(sb_http_check_origin(&lo, "http://evil.example", why, sizeof why) < 0);
	CHECK(sb_http_check_origin(&lo, "file://localhost", why, sizeof why) < 0);
	CHECK(sb_http_check_origin(&lo, "h://localhost", why, sizeof why) < 0);   /* a prefix of "http" is not it */
	CHECK(sb_http_check_origin(&lo, "://localhost", why, sizeof why) < 0);
	struct sb_http_bind any = {.addr = "0.0.0.0", .port = 8080, .wildcard = true, .origins = "https://box.example.org,tool.example"};
	CHECK(sb_http_check_host(&any, "box.example.org", why, sizeof why) == 0);
	CHECK(sb_http_check_origin(&any, "https://box.example.org", why, sizeof why) == 0);
	CHECK(sb_http_check_origin(&any, "https://tool.example:8443", why, sizeof why) == 0);
	CHECK(sb_http_check_origin(&any, "https://other.example", why, sizeof why) < 0);

	json_error_t e;
	json_t *m = json_loads("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\","
			       "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}", 0, &e);
	CHECK(sb_http_check_mirrors(m, "2026-07-28", "tools/call", "run_python", why, sizeof why) == 0);
	CHECK(sb_http_check_mirrors(m, " 2026-07-28\t", " tools/call ", "  run_python  ", why, sizeof why) == 0);
	CHECK(sb_http_check_mirrors(m, "2026-07-28", "tools/call", "=?base64?cnVuX3B5dGhvbg==?=", why, sizeof why) == 0);
	CHECK(sb_http_check_mirrors(m, "2026-07-28", "tools/call", "=?base64?cnVuX3NoZWxs?=", why, sizeof why) < 0);
	CHECK(sb_http_check_mirrors(m, "2026-07-28", "tools/call", "=?base64?!!!?=", why, sizeof why) < 0);
	CHECK(sb_http_check_mirrors(m, "2026-07-28", "tools/call", "run_shell", why, sizeof why) < 0);
	CHECK(sb_http_check_mirrors(m, "2026-07-28", "tools/call", NULL, why, sizeof why) < 0);
	CHECK(sb_http_check_mirrors(m, "2026-07-28", "tools/list", "run_python", why, sizeof why) < 0);
	CHECK(sb_http_check_mirrors(m, "2025-11-25", "tools/call", "run_python", why, sizeof why) < 0);
	CHECK(sb_http_check_mirrors(m, NULL, "tools/call", "run_python", why, sizeof why) < 0);
	CHECK(sb_http_check_mirrors(m, "2026-07-28", "tools/call", "run_python\x01", why, sizeof why) < 0);
	json_decref(m);
	/* The tasks extension: tasks/get, tasks/update, tasks/cancel name their task in Mcp-Name. */
	m = json_loads("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"j_1\","
		       "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}", 0, &e);
	CHECK(sb_http_check_mirrors(m, "2026-07-28", "tasks/get", "j_1", why, sizeof why) == 0);
	CHECK(sb_http_check_mirrors(m, "2026-07-28", "tasks/get", "j_2", why, sizeof why) < 0);
	CHECK(strstr(why, "does not match the body's taskId") != NULL);
	CHECK(sb_http_check_mirrors(m, "2026-07-28", "tasks/get", NULL, why, sizeof why) < 0);
	json_decref(m);
}

/* A fake request: headers from a NULL-terminated name, value list. */
struct fake {
	const char *const *h;
};

static const char *fake_header(void *ctx, const char *name)
{
	struct fake *f = ctx;
	for (const char *const *p = f->h; p[0]; p += 2)
		if (!strcasecmp(p[0], name))
			return p[1];
	return NULL;
}

static int req_at(struct sb_http_core *core, const char *method, const char *path, const char *body,
		  const char *const *headers, struct sb_http_resp *r)
{
	struct fake f = {headers};
	struct sb_http_req q = {.method = method, .path = path, .header = fake_header, .hctx = &f, .peer = "unit"};
	sb_http_resp_clear(r);
	sb_http_core_handle(core, &q, body, body ? strlen(body) : 0, r);
	return r->status;
}

static int req(struct sb_http_core *core, const char *method, const char *body, const char *const *headers,
	       struct sb_http_resp *r)
{
	struct fake f = {headers};
	struct sb_http_req q = {.method = method, .path = "/mcp", .header = fake_header, .hctx = &f, .peer = "unit"};
	sb_http_resp_clear(r);
	sb_http_core_handle(core, &q, body, body ? strlen(body) : 0, r);
	return r->status;
}

#define META "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
	     "\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define TOKEN "Bearer aaaaaaaaaaaaaaaaaaaa"

static void test_core(void)
{
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	struct sb_error why = {.msg = "no sandbox in a unit test"};
	struct sb_mcp_server *srv = sb_mcp_server_new(&cfg, NULL, &why, NULL);
	struct sb_http_tokens t;
	struct sb_error err = {0};
	CHECK(load("alice:aaaaaaaaaaaaaaaaaaaa\nbob:bbbbbbbbbbbbbbbbbbbb\n", 0600, &t, &err) == 0);
	struct sb_http_bind lo = {.addr = "127.0.0.1", .port = 8080, .loopback = true};
	struct sb_http_limits lim = {.max_body = 4096, .max_inflight_client = 4, .max_inflight_total = 8,
				     .max_sessions_client = 2, .session_idle_s = 3600};
	struct sb_http_core *core = sb_http_core_new(srv, &lo, &t, &lim, "unit");
	struct sb_http_resp r = {0};
	const char *disc = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" META "}}";
	const char *ok[] = {"Host", "127.0.0.1:8080", "Authorization", TOKEN, "Content-Type", "application/json",
			    "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover", NULL};
	CHECK(req(core, "POST", disc, ok, &r) == 200);
	CHECK_STR_CONTAINS(r.body, "\"supportedVersions\"");
	const char *noauth[] = {"Host", "127.0.0.1:8080", "Content-Type", "application/json", NULL};
	CHECK(req(core, "POST", disc, noauth, &r) == 401 && r.www_authenticate);
	const char *wrong[] = {"Host", "127.0.0.1:8080", "Authorization", "Bearer aaaaaaaaaaaaaaaaaaab", NULL};
	CHECK(req(core, "POST", disc, wrong, &r) == 401);
	const char *host[] = {"Host", "evil.example", "Authorization", TOKEN, NULL};
	CHECK(req(core, "POST", disc, host, &r) == 403);
	const char *origin[] = {"Host", "127.0.0.1", "Origin", "http://evil.example", "Authorization", TOKEN, NULL};
	CHECK(req(core, "POST", disc, origin, &r) == 403);
	CHECK(req(core, "GET", NULL, ok, &r) == 405 && r.allow);
	const char *text[] = {"Host", "127.0.0.1", "Authorization", TOKEN, "Content-Type", "text/plain", NULL};
	CHECK(req(core, "POST", disc, text, &r) == 415);
	char big[5000];
	memset(big, ' ', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	CHECK(req(core, "POST", big, ok, &r) == 413);
	/* One 413 answer, whichever step finds the body too long. */
	CHECK(r.body && !strcmp(r.body, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":"
				 "\"Content Too Large: the limit is 4096 bytes\"}}"));
	/* 2026-07-28 refusals and their statuses. */
	const char *nometa = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"server/discover\",\"params\":{}}";
	CHECK(req(core, "POST", nometa, ok, &r) == 400);
	CHECK_STR_CONTAINS(r.body, "-32602");
	const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{" META "}}";
	const char *ping_h[] = {"Host", "127.0.0.1", "Authorization", TOKEN, "Content-Type", "application/json",
				"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "ping", NULL};
	CHECK(req(core, "POST", ping, ping_h, &r) == 404);
	CHECK_STR_CONTAINS(r.body, "-32601");
	CHECK(req(core, "POST", ping, ok, &r) == 400); /* Mcp-Method says server/discover */
	CHECK_STR_CONTAINS(r.body, "-32020");
	const char *call = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"run_python\","
			   "\"arguments\":{\"code\":\"1\"}," META "}}";
	const char *call_h[] = {"Host", "127.0.0.1", "Authorization", TOKEN, "Content-Type", "application/json",
				"Accept", "application/json, text/event-stream", "MCP-Protocol-Version", "2026-07-28",
				"Mcp-Method", "tools/call", "Mcp-Name", "run_python", NULL};
	CHECK(req(core, "POST", call, call_h, &r) == 200);
	CHECK_STR_CONTAINS(r.body, "no sandbox in a unit test");
	CHECK_STR_CONTAINS(r.body, "\"resultType\":\"complete\"");
	/* Handshake era: sessions, one token's only. */
	const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
			   "\"2025-11-25\",\"capabilities\":{}}}";
	const char *legacy[] = {"Host", "127.0.0.1", "Authorization", TOKEN, "Content-Type", "application/json", NULL};
	char inst[SB_INSTANCE_MAX + 1];
	CHECK(req(core, "POST", init, legacy, &r) == 200 && sb_handle_parse(r.session_id, SB_HANDLE_HTTP, inst) &&
	      !strcmp(inst, "unit"));
	char sid[SB_HANDLE_LEN];
	snprintf(sid, sizeof sid, "%s", r.session_id);
	const char *list = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
	CHECK(req(core, "POST", list, legacy, &r) == 400); /* no session id */
	const char *with_sid[] = {"Host", "127.0.0.1", "Authorization", TOKEN, "Content-Type", "application/json",
				  "Mcp-Session-Id", sid, NULL};
	CHECK(req(core, "POST", list, with_sid, &r) == 200);
	/* A message is parsed once, the same way for routing and for handling:
	 * a string with \u0000 (which JSON allows) reaches its session. */
	const char *list_nul = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"x\":\"a\\u0000b\"}}";
	CHECK(req(core, "POST", list_nul, with_sid, &r) == 200);
	CHECK_STR_CONTAINS(r.body, "\"tools\"");
	const char *bob_sid[] = {"Host", "127.0.0.1", "Authorization", "Bearer bbbbbbbbbbbbbbbbbbbb", "Content-Type",
				 "application/json", "Mcp-Session-Id", sid, NULL};
	CHECK(req(core, "POST", list, bob_sid, &r) == 404);
	CHECK(req(core, "DELETE", NULL, bob_sid, &r) == 404);
	const char *bad_rev[] = {"Host", "127.0.0.1", "Authorization", TOKEN, "Content-Type", "application/json",
				 "Mcp-Session-Id", sid, "MCP-Protocol-Version", "1999-01-01", NULL};
	CHECK(req(core, "POST", list, bad_rev, &r) == 400);
	const char *note = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
	CHECK(req(core, "POST", note, with_sid, &r) == 202 && !r.body);
	CHECK(req(core, "DELETE", NULL, with_sid, &r) == 200);
	CHECK(req(core, "POST", list, with_sid, &r) == 404);
	/* A refused initialize opens no session; the per-client cap holds. */
	const char *bad_init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}";
	CHECK(req(core, "POST", bad_init, legacy, &r) == 200 && !r.session_id[0]);
	CHECK(req(core, "POST", init, legacy, &r) == 200 && req(core, "POST", init, legacy, &r) == 200);
	CHECK(req(core, "POST", init, legacy, &r) == 429 && r.retry_after);
	CHECK(req(core, "POST", "not json", legacy, &r) == 400);
	CHECK_STR_CONTAINS(r.body, "-32700");

	sb_http_resp_clear(&r);
	sb_http_core_free(core);
	sb_http_tokens_free(&t);
	sb_mcp_server_free(srv);
}

/* Many instances behind a router: handles that name their instance, the
 * x-mcp-header arguments' headers, /health, draining and /metrics. */
static void test_instances(void)
{
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	struct sb_error why = {.msg = "no sandbox in a unit test"};
	struct sb_mcp_server *srv = sb_mcp_server_new(&cfg, NULL, &why, NULL);
	struct sb_http_tokens t;
	struct sb_error err = {0};
	CHECK(load("alice:aaaaaaaaaaaaaaaaaaaa\n", 0600, &t, &err) == 0);
	struct sb_http_bind lo = {.addr = "127.0.0.1", .port = 8080, .loopback = true};
	struct sb_http_limits lim = {.max_body = 65536, .max_inflight_client = 4, .max_inflight_total = 8,
				     .max_sessions_client = 4, .session_idle_s = 3600};
	struct sb_http_core *core = sb_http_core_new(srv, &lo, &t, &lim, "node-a");
	struct sb_http_resp r = {0};

	/* /health: no token, no Host (a router's check sends none). */
	CHECK(req_at(core, "GET", "/health", NULL, NULL, &r) == 200);
	CHECK(r.body && !strcmp(r.body, "{\"status\":\"ready\",\"instance\":\"node-a\"}"));
	CHECK(req_at(core, "POST", "/health", NULL, NULL, &r) == 405);
	sb_http_core_not_ready(core, "the sandbox is not usable");
	CHECK(req_at(core, "GET", "/health", NULL, NULL, &r) == 503);
	CHECK_STR_CONTAINS(r.body, "\"not ready\"");
	CHECK_STR_CONTAINS(r.body, "the sandbox is not usable");
	sb_http_core_not_ready(core, NULL);

	/* /metrics: behind the token, Prometheus' text format. */
	const char *bare[] = {"Host", "127.0.0.1:8080", NULL};
	CHECK(req_at(core, "GET", "/metrics", NULL, bare, &r) == 401);
	const char *authed[] = {"Host", "127.0.0.1:8080", "Authorization", TOKEN, NULL};
	CHECK(req_at(core, "GET", "/metrics", NULL, authed, &r) == 200);
	CHECK(r.content_type && !strncmp(r.content_type, "text/plain; version=0.0.4", 25));
	CHECK_STR_CONTAINS(r.body, "# TYPE sagebox_tool_calls_total counter");

	/* The handshake era's Mcp-Session-Id names this instance; another
	 * instance's is answered in MCP's shape, naming it. */
	const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
			   "\"2025-11-25\",\"capabilities\":{}}}";
	const char *legacy[] = {"Host", "127.0.0.1", "Authorization", TOKEN, "Content-Type", "application/json", NULL};
	char inst[SB_INSTANCE_MAX + 1];
	CHECK(req(core, "POST", init, legacy, &r) == 200 && sb_handle_parse(r.session_id, 'm', inst) &&
	      !strcmp(inst, "node-a"));
	const char *list = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}";
	const char *gone = "m_node-b_0123456789abcdef0123456789abcdef";
	const char *to_gone[] = {"Host", "127.0.0.1", "Authorization", TOKEN, "Content-Type", "application/json",
				 "Mcp-Session-Id", gone, NULL};
	CHECK(req(core, "POST", list, to_gone, &r) == 404);
	CHECK_STR_CONTAINS(r.body, "\"id\":7");
	CHECK_STR_CONTAINS(r.body, "\"code\":-32001");
	CHECK_STR_CONTAINS(r.body, "ended with its instance node-b");
	CHECK_STR_CONTAINS(r.body, "\"handle\":\"m_node-b_0123456789abcdef0123456789abcdef\"");
	/* The same instance's unknown handle is the plain "not found". */
	const char *mine[] = {"Host", "127.0.0.1", "Authorization", TOKEN, "Content-Type", "application/json",
			      "Mcp-Session-Id", "m_node-a_0123456789abcdef0123456789abcdef", NULL};
	CHECK(req(core, "POST", list, mine, &r) == 404);
	CHECK(r.body && !strstr(r.body, "ended with its instance"));

	/* 2026-07-28: x-mcp-header in the schemas, Mcp-Param-* against the body. */
	const char *tl = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{" META "}}";
	const char *tl_h[] = {"Host", "127.0.0.1", "Authorization", TOKEN, "Content-Type", "application/json",
			      "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list", NULL};
	CHECK(req(core, "POST", tl, tl_h, &r) == 200);
	CHECK_STR_CONTAINS(r.body, "\"x-mcp-header\":\"Session-Id\"");
	CHECK_STR_CONTAINS(r.body, "\"x-mcp-header\":\"Job-Id\"");
	const char *sid_b = "s_node-b_0123456789abcdef0123456789abcdef";
	char call[512];
	snprintf(call, sizeof call, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"run_python\",\"arguments\":{\"code\":\"1\",\"session_id\":\"%s\"}," META "}}", sid_b);
#define CALL_H(...)                                                                                        \
	(const char *[]){"Host", "127.0.0.1", "Authorization", TOKEN, "Content-Type", "application/json",   \
			 "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "run_python", \
			 __VA_ARGS__ NULL}
	CHECK(req(core, "POST", call, CALL_H(), &r) == 400); /* the argument without its header */
	CHECK_STR_CONTAINS(r.body, "-32020");
	CHECK_STR_CONTAINS(r.body, "Mcp-Param-Session-Id");
	CHECK(req(core, "POST", call, CALL_H("Mcp-Param-Session-Id", "s_node-a_0123456789abcdef0123456789abcdef", ), &r) ==
	      400);
	CHECK_STR_CONTAINS(r.body, "-32020");
	CHECK(req(core, "POST", call, CALL_H("mcp-param-session-id", "=?base64?not base64!?=", ), &r) == 400);
	CHECK(req(core, "POST", call, CALL_H("Mcp-Param-Session-Id", "\tc19ub2RlLWJfMDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", ), &r) == 400);
	/* Header and body agree (plain, or Base64): node-b's session ended with node-b. */
	CHECK(req(core, "POST", call, CALL_H("Mcp-Param-Session-Id", sid_b, ), &r) == 200);
	CHECK_STR_CONTAINS(r.body, "\"id\":5");
	CHECK_STR_CONTAINS(r.body, "\"code\":-32001");
	CHECK_STR_CONTAINS(r.body, "session s_node-b_0123456789abcdef0123456789abcdef ended with its instance node-b");
	CHECK(req(core, "POST", call,
		  CALL_H("Mcp-Param-Session-Id", "=?base64?c19ub2RlLWJfMDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=?=", ),
		  &r) == 200);
	CHECK_STR_CONTAINS(r.body, "ended with its instance node-b");
	/* Not a handle: the tool itself answers. */
	snprintf(call, sizeof call, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"run_python\",\"arguments\":{\"code\":\"1\",\"session_id\":\"Hello\"}," META "}}");
	CHECK(req(core, "POST", call, CALL_H("Mcp-Param-Session-Id", "=?base64?SGVsbG8=?=", ), &r) == 200);
	CHECK(r.body && !strstr(r.body, "-32001"));
	/* A task of another instance (tasks/get's Mcp-Name is its id). */
	const char *task = "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tasks/get\",\"params\":{\"taskId\":"
			   "\"j_node-b_0123456789abcdef0123456789abcdef\"," META "}}";
	const char *task_h[] = {"Host", "127.0.0.1", "Authorization", TOKEN, "Content-Type", "application/json",
				"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tasks/get", "Mcp-Name",
				"j_node-b_0123456789abcdef0123456789abcdef", NULL};
	CHECK(req(core, "POST", task, task_h, &r) == 200);
	CHECK_STR_CONTAINS(r.body, "job j_node-b_0123456789abcdef0123456789abcdef ended with its instance node-b");

	/* Draining: /health says so (404: HAProxy's disable-on-404), no new
	 * MCP session, every answer ends its connection; open sessions go on. */
	CHECK(req(core, "POST", init, legacy, &r) == 200);
	char sid[SB_HANDLE_LEN];
	snprintf(sid, sizeof sid, "%s", r.session_id);
	sb_http_core_drain(core, "SIGTERM");
	CHECK(req_at(core, "GET", "/health", NULL, NULL, &r) == 404);
	CHECK_STR_CONTAINS(r.body, "\"status\":\"draining\"");
	CHECK_STR_CONTAINS(r.body, "\"why\":\"SIGTERM\"");
	CHECK(req(core, "POST", init, legacy, &r) == 503 && r.close && r.retry_after);
	const char *with_sid[] = {"Host", "127.0.0.1", "Authorization", TOKEN, "Content-Type", "application/json",
				  "Mcp-Session-Id", sid, NULL};
	CHECK(req(core, "POST", list, with_sid, &r) == 200 && r.close);
	unsigned inflight, sessions;
	uint64_t last;
	sb_http_core_open(core, &inflight, &sessions, &last);
	CHECK(inflight == 0 && sessions == 2 && last > 0);
#undef CALL_H

	sb_http_resp_clear(&r);
	sb_http_core_free(core);
	sb_http_tokens_free(&t);
	sb_mcp_server_free(srv);
}

int main(void)
{
	test_tokens();
	test_instances();
	test_guard();
	test_core();
	return check_summary();
}
