#include "mcp/message.h"

#include <string.h>

#include "mcp/revision.h"
#include "mcp/stateless.h"
#include "util/jsontext.h"

void sb_mcp_message_parse(const char *data, size_t len, const char *version_header, struct sb_mcp_message *m)
{
	sb_rpc_parse(data, len, &m->rpc);
	/* Read from the whole message, whatever its kind: a transport routes
	 * even a message the protocol layer will refuse. */
	const json_t *root = m->rpc.root;
	const json_t *meta = json_object_get(json_object_get(root, "params"), "_meta");
	const json_t *bv = json_object_get(json_is_object(meta) ? meta : NULL, SB_META_PROTOCOL_VERSION);
	const char *method = sb_json_text(json_object_get(root, "method"));
	m->modern = (bv && !sb_rev_is_legacy(sb_json_text(bv))) ||
		    (!bv && version_header && !sb_rev_is_legacy(version_header)) ||
		    (method && !strcmp(method, "server/discover"));
}

void sb_mcp_message_free(struct sb_mcp_message *m)
{
	sb_rpc_msg_free(&m->rpc);
}
