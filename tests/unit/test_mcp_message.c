/* Unit tests of mcp/message.c: a message is parsed once and its era
 * (2026-07-28 or the handshake era) decided there, from its _meta, the
 * transport's version header and its method. */
#include <string.h>

#include "check.h"
#include "mcp/message.h"

static bool modern(const char *text, const char *header)
{
	struct sb_mcp_message m;
	sb_mcp_message_parse(text, strlen(text), header, &m);
	bool r = m.modern;
	sb_mcp_message_free(&m);
	return r;
}

#define META(v) "\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" v "\"}}"

int main(void)
{
	const char *plain = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";
	const char *new_meta = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"," META("2026-07-28") "}";
	const char *old_meta = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"," META("2025-11-25") "}";
	const char *odd_meta = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"," META("1999-01-01") "}";
	const char *discover = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}";
	/* Without a header (stdio): the _meta decides, or server/discover. */
	CHECK(!modern(plain, NULL));
	CHECK(modern(new_meta, NULL));
	CHECK(!modern(old_meta, NULL));
	CHECK(modern(odd_meta, NULL)); /* refused later as a revision not spoken (-32022), not as "not initialized" */
	CHECK(modern(discover, NULL));
	/* The header counts only when the body names no revision. */
	CHECK(modern(plain, "2026-07-28"));
	CHECK(!modern(plain, "2025-06-18"));
	CHECK(!modern(old_meta, "2026-07-28"));
	CHECK(modern(new_meta, "2025-06-18"));
	/* A message that does not parse or is no request still has an era. */
	CHECK(modern("not json", "2026-07-28") && !modern("not json", NULL));
	CHECK(!modern("[1,2]", NULL));
	/* The parse is the JSON-RPC one (mcp/jsonrpc.h). */
	struct sb_mcp_message m;
	sb_mcp_message_parse(new_meta, strlen(new_meta), NULL, &m);
	CHECK(m.rpc.kind == SB_RPC_REQUEST && !strcmp(m.rpc.method, "tools/list") && m.rpc.params);
	sb_mcp_message_free(&m);
	return check_summary();
}
