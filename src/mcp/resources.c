#include "mcp/resources.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/jsonrpc.h"
#include "mcp/revision.h"
#include "mcp/stateless.h"
#include "mcp/server.h"
#include "runner/runner.h"
#include "tools/sessions.h"
#include "util/buf.h"
#include "util/utf8.h"

/* The viewer's HTML, KaTeX and three.js inlined (viewer/, embedded at build time). */
extern const char sb_viewer_html[];

/* The largest workspace file resources/read returns whole. */
#define RESOURCE_MAX (8u << 20)

bool sb_ui_declared(const json_t *capabilities)
{
	const json_t *ext = json_object_get(json_object_get(capabilities, "extensions"), SB_UI_EXTENSION);
	json_t *types = json_object_get(ext, "mimeTypes");
	size_t i;
	json_t *t;
	json_array_foreach(types, i, t)
		if (json_is_string(t) && !strcmp(json_string_value(t), SB_UI_MIME))
			return true;
	return false;
}

void sb_ui_link_tools(json_t *tools_list, const json_t *capabilities)
{
	bool ui = sb_ui_declared(capabilities);
	json_t *tools = json_object_get(tools_list, "tools");
	for (size_t i = json_array_size(tools); i-- > 0;) {
		json_t *t = json_array_get(tools, i);
		const struct sb_tool *row = sb_tool_find(json_string_value(json_object_get(t, "name")));
		if (!row)
			continue;
		if (row->app_only && !ui) {
			/* A client that cannot show the viewer would offer it to its model. */
			json_array_remove(tools, i);
			continue;
		}
		if (!ui)
			continue;
		json_t *meta = json_object();
		if (row->viewed)
			json_object_set_new(meta, "resourceUri", json_string(SB_UI_VIEWER_URI));
		if (row->app_only) /* the host hides it from the model; the viewer calls it */
			json_object_set_new(meta, "visibility", json_pack("[s]", "app"));
		json_object_set_new(t, "_meta", json_pack("{s:o}", "ui", meta));
	}
}

void sb_ui_server_capability(json_t *server_caps, const json_t *client_caps)
{
	if (!sb_ui_declared(client_caps))
		return;
	json_t *ext = json_object_get(server_caps, "extensions");
	if (!json_is_object(ext)) {
		ext = json_object();
		json_object_set_new(server_caps, "extensions", ext);
	}
	json_object_set_new(ext, SB_UI_EXTENSION, json_object());
}

/* The viewer's _meta.ui: its CSP said explicitly, with no origin in any
 * list, so a host that builds the frame's policy from the declaration
 * (rather than the extension's default) gives it no network either: the
 * page is self-contained and its HTML items are markup the model wrote. */
static json_t *viewer_ui_meta(void)
{
	return json_pack("{s:{s:b, s:{s:[], s:[], s:[], s:[]}}}", "ui", "prefersBorder", 1, "csp", "connectDomains",
			 "resourceDomains", "frameDomains", "baseUriDomains");
}

static json_t *viewer_entry(void)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "uri", SB_UI_VIEWER_URI, "name", "viewer", "title",
			 "sagebox result viewer", "description",
			 "Shows a run's result as SageMathCell would: typeset formulas, figures, SVG, 3D scenes "
			 "you can turn, output and verdict.",
			 "mimeType", SB_UI_MIME, "_meta", viewer_ui_meta());
}

json_t *sb_resources_list(const struct sb_mcp_request *q)
{
	/* Session files are not listed (file_list lists them, per session);
	 * results link them as resource_link blocks. */
	json_t *list = json_array();
	if (sb_ui_declared(q->capabilities))
		json_array_append_new(list, viewer_entry());
	return json_pack("{s:o}", "resources", list);
}

__attribute__((format(printf, 4, 5))) static json_t *refuse(int *code, char *msg, size_t size, const char *fmt, ...)
{
	va_list ap;
	*code = SB_RPC_INVALID_PARAMS;
	va_start(ap, fmt);
	vsnprintf(msg, size, fmt, ap);
	va_end(ap);
	return NULL;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* %XX escapes decoded into out (size >= strlen(in) + 1); -1 for a bad
 * escape or an escaped NUL. */
static int unescape(const char *in, char *out)
{
	for (; *in; in++) {
		if (*in != '%') {
			*out++ = *in;
			continue;
		}
		int hi = hexval(in[1]), lo = hi < 0 ? -1 : hexval(in[2]);
		if (lo < 0 || (hi == 0 && lo == 0))
			return -1;
		*out++ = (char)(hi << 4 | lo);
		in += 2;
	}
	*out = '\0';
	return 0;
}

/* A workspace path from a URI must stay relative and never climb: the
 * driver refuses both too (openat2 RESOLVE_BENEATH); this refuses them
 * before any sandbox is asked. */
static bool climbs(const char *path)
{
	if (path[0] == '/')
		return true;
	for (const char *p = path; p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL)
		if (!strncmp(p, "..", 2) && (p[2] == '/' || p[2] == '\0'))
			return true;
	return false;
}

static int collect(void *ctx, const char *p, size_t n)
{
	return sb_buf_append(ctx, p, n);
}

static json_t *read_session_file(const struct sb_mcp_request *q, const char *uri, int *code, char *msg, size_t size)
{
	const char *rest = uri + strlen(SB_SESSION_URI_PREFIX);
	const char *slash = strchr(rest, '/');
	if (!slash || slash == rest || slash[1] == '\0' || (size_t)(slash - rest) > SB_HANDLE_MAX_CHARS)
		return refuse(code, msg, size,
			      "Invalid params: a session file's uri is " SB_SESSION_URI_PREFIX
			      "SESSION_ID/PATH (PATH relative to /work), e.g. " SB_SESSION_URI_PREFIX "s_…/plot.png");
	char id[SB_HANDLE_MAX_CHARS + 1];
	memcpy(id, rest, (size_t)(slash - rest));
	id[slash - rest] = '\0';
	char *path = malloc(strlen(slash + 1) + 1);
	if (!path) {
		*code = SB_RPC_INTERNAL_ERROR;
		snprintf(msg, size, "Internal error: out of memory");
		return NULL;
	}
	if (unescape(slash + 1, path) < 0 || climbs(path)) {
		free(path);
		return refuse(code, msg, size,
			      "Invalid params: the path in %.200s must be relative to /work, without '..', and its "
			      "%%XX escapes must be valid and not %%00",
			      uri);
	}
	struct sb_error err = {0};
	struct sb_runner *runner = q->client->srv->tools.runner;
	struct sb_sessions *ss = runner ? sb_runner_sessions(runner, &err) : NULL;
	SB_AUTO_BUF data = {0};
	json_t *meta = NULL;
	/* The owner check is the runner's, as for file_read: another client's
	 * session gets the same "unknown session" error as one that never was. */
	if (!ss || sb_session_read(ss, q->client->owner, id, path, 0, RESOURCE_MAX + 1, collect, &data, &meta, &err)) {
		free(path);
		*code = SB_RPC_RESOURCE_NOT_FOUND;
		snprintf(msg, size, "Resource not found: %.200s: %s%s%s", uri,
			 ss || err.msg[0] ? err.msg : "sessions are not available here",
			 err.hint[0] ? "; " : "", err.hint);
		return NULL;
	}
	json_decref(meta);
	free(path);
	if (data.len > RESOURCE_MAX)
		return refuse(code, msg, size,
			      "Invalid params: %.200s is larger than %u MiB: read it in parts with the file_read tool "
			      "(offset, length)",
			      uri, RESOURCE_MAX >> 20);
	const char *p = data.data ? data.data : "";
	bool image;
	const char *mime = sb_file_mime_of(p, data.len, uri, &image);
	bool text = !mime && sb_utf8_valid(p, data.len, NULL) && !memchr(p, '\0', data.len);
	json_t *c = json_pack("{s:s, s:s}", "uri", uri, "mimeType",
			      mime ? mime : text ? "text/plain" : "application/octet-stream");
	if (text) {
		json_object_set_new(c, "text", json_stringn(p, data.len));
	} else {
		char *b64 = sb_file_base64(p, data.len);
		json_object_set_new(c, "blob", json_string(b64 ? b64 : ""));
		free(b64);
	}
	json_t *r = json_pack("{s:[o]}", "contents", c);
	if (sb_rev_has(q->revision, SB_REV_CACHE_HINTS)) {
		/* A workspace file changes whenever the session's code runs. */
		json_object_set_new(r, "ttlMs", json_integer(0));
		json_object_set_new(r, "cacheScope", json_string("private"));
	}
	return r;
}

json_t *sb_resources_read(const struct sb_mcp_request *q, int *code, char *msg, size_t size)
{
	json_t *uri_v = json_object_get(q->params, "uri");
	const char *uri = json_string_value(uri_v);
	if (!uri || strlen(uri) != json_string_length(uri_v))
		return refuse(code, msg, size, "Invalid params: resources/read needs \"uri\" (a string without NUL)");
	if (!strcmp(uri, SB_UI_VIEWER_URI) && sb_ui_declared(q->capabilities)) {
		json_t *r = json_pack("{s:[{s:s, s:s, s:s, s:o}]}", "contents", "uri", SB_UI_VIEWER_URI, "mimeType",
				      SB_UI_MIME, "text", sb_viewer_html, "_meta", viewer_ui_meta());
		sb_stateless_cache_hints(r, q->revision); /* fixed while the server runs */
		return r;
	}
	if (!strncmp(uri, SB_SESSION_URI_PREFIX, strlen(SB_SESSION_URI_PREFIX)))
		return read_session_file(q, uri, code, msg, size);
	*code = SB_RPC_RESOURCE_NOT_FOUND;
	snprintf(msg, size,
		 "Resource not found: %.200s (this server has " SB_SESSION_URI_PREFIX "SESSION_ID/PATH for a "
		 "session's files, and " SB_UI_VIEWER_URI " for clients that declare the MCP Apps extension "
		 SB_UI_EXTENSION ")",
		 uri);
	return NULL;
}
