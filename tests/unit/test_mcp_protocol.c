/* Unit tests of the MCP layer's pure parts: UTF-8, SHA-256, the streaming id
 * scanner, JSON-RPC classification, tool argument checks and tools/list. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config/config.h"
#include "mcp/idscan.h"
#include "mcp/jsonrpc.h"
#include "mcp/sha256.h"
#include "mcp/tools.h"
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

static void hex_of(const char *s, size_t n, char out[65])
{
	sb_sha256_hex(s, n, out);
}

static void test_sha256(void)
{
	char h[65];
	hex_of("", 0, h);
	CHECK(!strcmp(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
	hex_of("abc", 3, h);
	CHECK(!strcmp(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	hex_of(two, strlen(two), h);
	CHECK(!strcmp(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
	/* A million 'a's, fed in uneven pieces. */
	struct sb_sha256 c;
	unsigned char d[32];
	char *a = malloc(1000000);
	memset(a, 'a', 1000000);
	sb_sha256_init(&c);
	for (size_t off = 0, step = 1; off < 1000000; off += step, step = step * 3 % 1000 + 1)
		sb_sha256_update(&c, a + off, off + step > 1000000 ? 1000000 - off : step);
	sb_sha256_final(&c, d);
	free(a);
	for (int i = 0; i < 32; i++)
		snprintf(h + 2 * i, 3, "%02x", d[i]);
	CHECK(!strcmp(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
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
		      SB_RPC_INVALID && code == SB_RPC_PARSE_ERROR);
	json_decref(id);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"x\",\"p\":\"\xff\"}", &code, &id) == SB_RPC_INVALID &&
	      code == SB_RPC_PARSE_ERROR && json_integer_value(id) == 6);
	json_decref(id);

	json_t *e = sb_rpc_error(NULL, -32601, "Method not found", NULL);
	CHECK(json_is_null(json_object_get(e, "id")));
	CHECK(json_integer_value(json_object_get(json_object_get(e, "error"), "code")) == -32601);
	json_decref(e);
}

static void test_tools(void)
{
	struct sb_config cfg;
	sb_config_defaults(&cfg);
	const struct sb_tool *t = sb_tool_find("run_sagemath");
	CHECK(t && t->kind == SB_TOOL_RUN && t->lang == SB_LANG_SAGE);
	CHECK(!sb_tool_find("run_sage"));
	char msg[512];
	struct sb_run_args ra;

	json_t *a = json_pack("{s:s}", "code", "print(1)");
	CHECK(sb_tool_check_args(t, a, &cfg, &ra, msg, sizeof msg) == 0 && ra.timeout_s == cfg.limits.timeout_s);
	json_decref(a);
	a = json_pack("{s:s, s:f}", "code", "1", "timeout_seconds", 5.0);
	CHECK(sb_tool_check_args(t, a, &cfg, &ra, msg, sizeof msg) == 0 && ra.timeout_s == 5);
	json_decref(a);
	a = json_pack("{s:s, s:f}", "code", "1", "timeout_seconds", 5.5);
	CHECK(sb_tool_check_args(t, a, &cfg, &ra, msg, sizeof msg) < 0);
	json_decref(a);
	a = json_pack("{s:s, s:i}", "code", "1", "timeout_seconds", 601);
	CHECK(sb_tool_check_args(t, a, &cfg, &ra, msg, sizeof msg) < 0);
	CHECK(strstr(msg, "timeout_seconds") != NULL);
	json_decref(a);
	a = json_pack("{s:s, s:b}", "code", "1", "x", 1);
	CHECK(sb_tool_check_args(t, a, &cfg, &ra, msg, sizeof msg) < 0);
	CHECK(strstr(msg, "\"x\"") != NULL);
	json_decref(a);
	CHECK(sb_tool_check_args(t, NULL, &cfg, &ra, msg, sizeof msg) < 0);
	CHECK(strstr(msg, "code") != NULL);

	/* 50,000 four-byte characters pass; one more does not. */
	size_t n = 50000;
	char *big = malloc(4 * (n + 1) + 1);
	for (size_t i = 0; i <= n; i++)
		memcpy(big + 4 * i, "\xf0\x9f\x98\x80", 4);
	a = json_object();
	json_object_set_new(a, "code", json_stringn(big, 4 * n));
	CHECK(sb_tool_check_args(t, a, &cfg, &ra, msg, sizeof msg) == 0 && ra.code_chars == n && ra.code_len == 4 * n);
	json_object_set_new(a, "code", json_stringn(big, 4 * (n + 1)));
	CHECK(sb_tool_check_args(t, a, &cfg, &ra, msg, sizeof msg) < 0);
	CHECK(strstr(msg, "50001") != NULL);
	json_decref(a);
	free(big);

	const struct sb_tool *st = sb_tool_find("sandbox_status");
	CHECK(sb_tool_check_args(st, NULL, &cfg, NULL, msg, sizeof msg) == 0);
	a = json_pack("{s:b}", "verbose", 1);
	CHECK(sb_tool_check_args(st, a, &cfg, NULL, msg, sizeof msg) < 0);
	json_decref(a);

	json_t *old = sb_tools_list(&cfg, "2024-11-05");
	json_t *mid = sb_tools_list(&cfg, "2025-03-26");
	json_t *now = sb_tools_list(&cfg, "2025-06-18");
	json_t *t0 = json_array_get(json_object_get(old, "tools"), 0);
	json_t *t1 = json_array_get(json_object_get(mid, "tools"), 0);
	json_t *t2 = json_array_get(json_object_get(now, "tools"), 0);
	CHECK(json_array_size(json_object_get(now, "tools")) == 5);
	CHECK(!json_object_get(t0, "annotations") && !json_object_get(t0, "title") && !json_object_get(t0, "outputSchema"));
	CHECK(json_object_get(t1, "annotations") && !json_object_get(t1, "title") && !json_object_get(t1, "outputSchema"));
	CHECK(json_object_get(t2, "annotations") && json_object_get(t2, "title") && json_object_get(t2, "outputSchema"));
	CHECK(json_is_false(json_object_get(json_object_get(t2, "inputSchema"), "additionalProperties")));
	CHECK_STR_CONTAINS(json_string_value(json_object_get(t2, "description")), "R.<x> = QQ[]");
	json_decref(old);
	json_decref(mid);
	json_decref(now);
}

int main(void)
{
	test_utf8();
	test_sha256();
	test_idscan();
	test_jsonrpc();
	test_tools();
	return check_summary();
}
