#include "transport/http_guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcp/resources.h"
#include "mcp/stateless.h"
#include "mcp/toolview.h"
#include "util/jsontext.h"

/* Split "host[:port]" / "[v6]:port" into host (without brackets) and port
 * text. Returns -1 when malformed. */
static int split_hostport(const char *s, size_t n, char *host, size_t hsize, const char **port, size_t *plen)
{
	const char *end = s + n;
	const char *h = s, *he;
	if (n && *s == '[') {
		he = memchr(s, ']', n);
		if (!he)
			return -1;
		h = s + 1;
		*port = he + 1 < end && he[1] == ':' ? he + 2 : NULL;
		if (he + 1 < end && he[1] != ':')
			return -1;
	} else {
		const char *colon = memchr(s, ':', n);
		if (colon && memchr(colon + 1, ':', (size_t)(end - colon - 1)))
			return -1; /* an unbracketed IPv6 literal */
		he = colon ? colon : end;
		*port = colon ? colon + 1 : NULL;
	}
	*plen = *port ? (size_t)(end - *port) : 0;
	size_t hl = (size_t)(he - h);
	if (hl == 0 || hl >= hsize)
		return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	return 0;
}

static bool loopback_name(const char *h)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (!strcasecmp(h, "localhost"))
		return true;
	/* Numeric only: "127.0.0.1.evil.example" is a name an attacker owns. */
	if (inet_pton(AF_INET, h, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, h, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* h is one of the extra names or origins given with --allowed-origin. */
static bool listed(const char *list, const char *h)
{
	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, ",");
		const char *e = p;
		/* An entry may be a whole origin (scheme://host[:port]) or a host. */
		const char *sep = memmem(e, n, "://", 3);
		if (sep) {
			n -= (size_t)(sep + 3 - e);
			e = sep + 3;
		}
		const char *colon = memchr(e, ':', n);
		size_t hl = colon && *e != '[' ? (size_t)(colon - e) : n;
		if (hl == strlen(h) && !strncasecmp(e, h, hl))
			return true;
		p += strcspn(p, ",");
		p += *p == ',';
	}
	return false;
}

static bool host_allowed(const struct sb_http_bind *b, const char *h)
{
	if (listed(b->origins, h))
		return true;
	/* A server on loopback answers only to loopback names: a page whose own
	 * name was rebound to 127.0.0.1 sends Host: its.name, and is refused
	 * (DNS rebinding). */
	if (b->loopback)
		return loopback_name(h);
	if (b->wildcard)
		return true; /* any of the machine's names; the token decides */
	return !strcasecmp(h, b->addr);
}

int sb_http_check_host(const struct sb_http_bind *b, const char *host, char *why, size_t size)
{
	char h[256];
	const char *port;
	size_t plen;
	if (!host || split_hostport(host, strlen(host), h, sizeof h, &port, &plen) < 0) {
		snprintf(why, size, "the Host header is missing or malformed");
		return -1;
	}
	if (!host_allowed(b, h)) {
		snprintf(why, size, "Host %.100s is not a name of this server (DNS rebinding protection; "
			 "allow it with --allowed-origin)", host);
		return -1;
	}
	return 0;
}

int sb_http_check_origin(const struct sb_http_bind *b, const char *origin, char *why, size_t size)
{
	if (!origin)
		return 0;
	const char *sep = strstr(origin, "://");
	char h[256];
	const char *port;
	size_t plen;
	size_t scheme = sep ? (size_t)(sep - origin) : 0;
	if (sep && ((scheme == 4 && !strncmp(origin, "http", 4)) || (scheme == 5 && !strncmp(origin, "https", 5))) &&
	    split_hostport(sep + 3, strlen(sep + 3), h, sizeof h, &port, &plen) == 0 && host_allowed(b, h) &&
	    (b->loopback || listed(b->origins, h) || !strcasecmp(h, b->addr)))
		return 0;
	/* A browser page from anywhere else (or "null": a sandboxed frame,
	 * a file) must not drive a local server through the user's browser. */
	snprintf(why, size, "Origin %.100s may not use this server (allow it with --allowed-origin)", origin);
	return -1;
}

/* Decode the "=?base64?...?=" sentinel form of a header value (NULL: the
 * Base64 is not valid). */
static char *header_value(const char *v, size_t *len)
{
	size_t n = strlen(v);
	if (n < 11 || strncmp(v, "=?base64?", 9) || strcmp(v + n - 2, "?="))
		return *len = n, strdup(v);
	struct base64_decode_ctx ctx;
	size_t in = n - 11, out = BASE64_DECODE_LENGTH(in) + 1, done = out;
	char *d = malloc(out);
	base64_decode_init(&ctx);
	if (!d || !base64_decode_update(&ctx, &done, (uint8_t *)d, in, v + 9) || !base64_decode_final(&ctx)) {
		free(d);
		return NULL;
	}
	*len = done;
	return d;
}

static bool value_ok(const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if ((*p < 0x20 && *p != '\t') || *p > 0x7e)
			return false;
	return true;
}

/* The methods whose Mcp-Name is a task's id (the tasks extension). */
static bool task_method(const char *method)
{
	return method && (!strcmp(method, "tasks/get") || !strcmp(method, "tasks/update") || !strcmp(method, "tasks/cancel"));
}

/* A header value without the optional white space around it (RFC 9110 5.5). */
static const char *trim(const char *v, char *buf, size_t size)
{
	if (!v)
		return NULL;
	while (*v == ' ' || *v == '\t')
		v++;
	size_t n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return buf;
}

int sb_http_check_mirrors(const json_t *msg, const char *hv_raw, const char *hm_raw, const char *hn_raw, char *why,
			  size_t size)
{
	char bv_buf[128], bm_buf[256], bn_buf[8192];
	const char *hv = trim(hv_raw, bv_buf, sizeof bv_buf);
	const char *hm = trim(hm_raw, bm_buf, sizeof bm_buf);
	const char *hn = trim(hn_raw, bn_buf, sizeof bn_buf);
	const json_t *params = json_object_get(msg, "params");
	const json_t *bv = json_object_get(json_object_get(params, "_meta"), SB_META_PROTOCOL_VERSION);
	const char *method = sb_json_text(json_object_get(msg, "method"));
	if (json_is_string(bv)) {
		if (!hv) {
			snprintf(why, size, "Header mismatch: the MCP-Protocol-Version header is missing");
			return -1;
		}
		if (strcmp(hv, json_string_value(bv))) {
			snprintf(why, size, "Header mismatch: MCP-Protocol-Version header value '%.64s' does not match "
				 "the body's _meta value '%.64s'", hv, json_string_value(bv));
			return -1;
		}
	}
	if (!method)
		return 0; /* not a request: the protocol layer says what is wrong */
	if (!hm || strcmp(hm, method)) {
		snprintf(why, size, "Header mismatch: Mcp-Method header %s%.64s%s does not match the body's method '%.64s'",
			 hm ? "value '" : "(", hm ? hm : "missing", hm ? "'" : ")", method);
		return -1;
	}
	/* The tasks extension (2026-07-28): tasks/get, tasks/update, tasks/cancel carry the task id. */
	const char *key = !strcmp(method, "tools/call") || !strcmp(method, "prompts/get") ? "name"
			  : !strcmp(method, "resources/read")                            ? "uri"
			  : task_method(method)                                          ? "taskId"
											 : NULL;
	if (!key)
		return 0;
	const json_t *body = json_object_get(params, key);
	if (!json_is_string(body))
		return 0; /* a bad name is the method's error to give */
	size_t len = 0;
	char *v = hn && value_ok(hn) ? header_value(hn, &len) : NULL;
	bool same = v && len == json_string_length(body) && !memcmp(v, json_string_value(body), len);
	free(v);
	if (!same) {
		snprintf(why, size, "Header mismatch: Mcp-Name header %s does not match the body's %s", hn ? "value" : "missing",
			 key);
		return -1;
	}
	return 0;
}

/* Whether the header's text (decoded) says what the body's value does. */
static bool param_same(const struct sb_mcp_param_header *p, const json_t *body, const char *v, size_t len)
{
	if (p->type == SB_MCP_PARAM_BOOLEAN)
		return json_is_boolean(body) && !strcmp(v, json_is_true(body) ? "true" : "false");
	if (p->type == SB_MCP_PARAM_INTEGER) {
		/* Compared as numbers: "42" and "42.0" say the same. */
		char *end;
		double h = strtod(v, &end);
		return json_is_number(body) && len && !*end && h == json_number_value(body);
	}
	return json_is_string(body) && len == json_string_length(body) && !memcmp(v, json_string_value(body), len);
}

/* The parameter headers a tools/call's client had to send (PH, their
 * count returned) and its arguments (*ARGS). */
static size_t call_param_headers(const json_t *params, struct sb_mcp_param_header *ph, const json_t **args)
{
	const char *tool = sb_json_text(json_object_get(params, "name"));
	const struct sb_tool *t = tool ? sb_tool_find(tool) : NULL;
	*args = json_object_get(params, "arguments");
	/* The viewer's own tool was never listed to a client without the MCP
	 * Apps extension, so it cannot know its headers: the protocol layer
	 * refuses the call itself and says why. */
	if (t && t->app_only &&
	    !sb_ui_declared(json_object_get(json_object_get(params, "_meta"), SB_META_CLIENT_CAPABILITIES)))
		return 0;
	return sb_mcp_param_headers(tool, ph);
}

int sb_http_check_params(const json_t *msg, sb_http_header_fn header, void *hctx, char *why, size_t size)
{
	const json_t *params = json_object_get(msg, "params");
	const char *method = sb_json_text(json_object_get(msg, "method"));
	if (!method || strcmp(method, "tools/call"))
		return 0;
	struct sb_mcp_param_header ph[SB_MCP_PARAM_HEADERS_MAX];
	const json_t *args;
	size_t n = call_param_headers(params, ph, &args);
	for (size_t i = 0; i < n; i++) {
		const json_t *body = json_object_get(args, ph[i].arg);
		if (!body || json_is_null(body))
			continue; /* no value: no header is expected */
		char name[96], buf[8192];
		snprintf(name, sizeof name, "Mcp-Param-%s", ph[i].header);
		const char *h = trim(header(hctx, name), buf, sizeof buf);
		if (!h) {
			snprintf(why, size, "Header mismatch: the %s header is missing (the body has argument %s)", name,
				 ph[i].arg);
			return -1;
		}
		if (!value_ok(h)) {
			snprintf(why, size, "Header mismatch: the %s header has characters a header may not carry "
				 "(send the value as =?base64?...?=)", name);
			return -1;
		}
		size_t len = 0;
		char *v = header_value(h, &len);
		if (!v) {
			snprintf(why, size, "Header mismatch: the %s header's =?base64?...?= value is not valid Base64", name);
			return -1;
		}
		bool same = param_same(&ph[i], body, v, len);
		free(v);
		if (!same) {
			snprintf(why, size, "Header mismatch: the %s header does not match the body's argument %s", name,
				 ph[i].arg);
			return -1;
		}
	}
	return 0;
}

const char *sb_http_routing_handle(const json_t *msg)
{
	const json_t *params = json_object_get(msg, "params");
	const char *method = sb_json_text(json_object_get(msg, "method"));
	if (task_method(method))
		return sb_json_text(json_object_get(params, "taskId"));
	if (!method || strcmp(method, "tools/call"))
		return NULL;
	struct sb_mcp_param_header ph[SB_MCP_PARAM_HEADERS_MAX];
	const json_t *args;
	size_t n = call_param_headers(params, ph, &args);
	for (size_t i = 0; i < n; i++) {
		const char *v = sb_json_text(json_object_get(args, ph[i].arg));
		if (v)
			return v;
	}
	return NULL;
}
