/* Fuzz target: HTTP request handling of `sagebox mcp --http` without
 * sockets (transport/http_core.c through sb_http_core_handle, the entry
 * point transport/http.c feeds from libmicrohttpd): Host and Origin
 * checks, bearer tokens, methods, content types, body and in-flight caps,
 * sessions of the handshake era (open, use, DELETE, another client's), the
 * 2026-07-28 era's header mirrors, and the MCP message path behind them
 * (a real server with no runner: a run tool answers with its sandbox error
 * after its arguments were checked). libmicrohttpd's own parsing is not
 * ours and not fuzzed.
 *
 * Input: requests separated by a line "%%". Each is a line "METHOD PATH",
 * header lines "Name: value", an empty line, then the body. In a header
 * value $A and $B stand for the tokens of the clients alice and bob, and $S
 * for the session id of the last answer that gave one (session ids are
 * random, so a fuzzer could not guess them). SB_FUZZ_HTTP_TRACE=1 prints
 * each request's answer (for writing seeds).
 *
 * Checked: every answer has a status the transport knows, a JSON body is
 * JSON, a 401 asks for a bearer token (and only a 401 does), a session id
 * given out is 32 hex digits, a request naming another client's session
 * never ends it (a DELETE is refused) and leaves it usable by its owner,
 * and freeing the core joins every call (ASan: no leak). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "core/handle.h"
#include "mcp/mcp.h"
#include "transport/http_core.h"

#define TOKEN_A "aaaaaaaaaaaaaaaaaaaaaaaa"
#define TOKEN_B "bbbbbbbbbbbbbbbbbbbbbbbb"
#define MAX_HEADERS 16
#define MAX_SESSIONS 16

static struct sb_config cfg;
static bool trace; /* SB_FUZZ_HTTP_TRACE=1: each request and its answer on stderr (writing seeds) */
static struct sb_http_tokens tokens;
static const struct sb_http_bind bind = {.addr = "127.0.0.1", .port = 8000, .loopback = true,
					 .origins = "https://app.example"};
static const struct sb_http_limits lim = {.max_body = 8192, .max_inflight_client = 4, .max_inflight_total = 8,
					  .max_sessions_client = 3, .session_idle_s = 3600};

struct header {
	char *name, *value;
};
struct request {
	char method[16], path[64];
	struct header h[MAX_HEADERS];
	size_t nh;
};

static const char *header(void *hctx, const char *name)
{
	const struct request *q = hctx;
	for (size_t i = 0; i < q->nh; i++)
		if (!strcasecmp(q->h[i].name, name))
			return q->h[i].value;
	return NULL;
}

/* value with $A, $B and $S replaced (a new string). */
static char *expand(const char *v, size_t n, const char *sid)
{
	size_t cap = n * SB_HANDLE_LEN + 1; /* "$S" (2 bytes) grows the most */
	char *out = malloc(cap), *o = out;
	if (!out)
		abort();
	for (size_t i = 0; i < n; i++) {
		const char *put = NULL;
		if (v[i] == '$' && i + 1 < n)
			put = v[i + 1] == 'A' ? TOKEN_A : v[i + 1] == 'B' ? TOKEN_B : v[i + 1] == 'S' ? sid : NULL;
		if (put) {
			o += sprintf(o, "%s", put);
			i++;
		} else {
			*o++ = v[i] ? v[i] : ' ';
		}
	}
	*o = '\0';
	return out;
}

/* Which client a request authenticates as: 'A', 'B', or 0 (none or both:
 * then its answer is not checked for session ownership). */
static char who(const struct request *q)
{
	const char *a = header((void *)q, "Authorization");
	bool ha = a && strstr(a, TOKEN_A), hb = a && strstr(a, TOKEN_B);
	return ha == hb ? 0 : ha ? 'A' : 'B';
}

struct session {
	char id[SB_HANDLE_LEN];
	char owner;
};

static void check_answer(const struct sb_http_resp *r)
{
	static const int known[] = {200, 202, 400, 401, 403, 404, 405, 413, 415, 429, 503};
	bool ok = false;
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		ok = ok || r->status == known[i];
	if (!ok || (r->status == 401) != r->www_authenticate || (r->body && !r->content_type) || r->stream)
		abort();
	if (r->content_type && !strcmp(r->content_type, "application/json")) {
		json_error_t e;
		json_t *j = json_loadb(r->body, r->body_len, 0, &e);
		if (!j)
			abort();
		json_decref(j);
	}
	/* A session id the server hands out is a handle naming this instance. */
	char inst[SB_INSTANCE_MAX + 1];
	if (r->session_id[0] && (!sb_handle_parse(r->session_id, SB_HANDLE_HTTP, inst) || strcmp(inst, "fuzz")))
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	sb_config_defaults(&cfg);
	cfg.max_concurrent = 2;
	trace = getenv("SB_FUZZ_HTTP_TRACE") != NULL;
	char path[] = "/tmp/sagebox-fuzz-tokens-XXXXXX";
	int fd = mkstemp(path);
	const char *text = "alice:" TOKEN_A "\nbob:" TOKEN_B "\n";
	struct sb_error err = {0};
	if (fd < 0 || fchmod(fd, 0600) < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
	    sb_http_tokens_load(path, &tokens, &err) < 0 || tokens.n != 2)
		abort();
	close(fd);
	unlink(path);
	return 0;
}

/* Parse one request of the input [p, end); returns its body. */
static const char *parse(struct request *q, const char *p, const char *end, const char **body_end,
			 const char *sid)
{
	const char *line_end = memchr(p, '\n', (size_t)(end - p));
	if (!line_end)
		line_end = end;
	const char *sp = memchr(p, ' ', (size_t)(line_end - p));
	const char *m_end = sp ? sp : line_end;
	snprintf(q->method, sizeof q->method, "%.*s", (int)(m_end - p), p);
	snprintf(q->path, sizeof q->path, "%.*s", sp ? (int)(line_end - sp - 1) : 0, sp ? sp + 1 : "");
	p = line_end < end ? line_end + 1 : end;
	while (p < end && *p != '\n') {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			e = end;
		const char *colon = memchr(p, ':', (size_t)(e - p));
		if (colon && q->nh < MAX_HEADERS) {
			const char *v = colon + 1;
			while (v < e && *v == ' ')
				v++;
			q->h[q->nh].name = strndup(p, (size_t)(colon - p));
			q->h[q->nh].value = expand(v, (size_t)(e - v), sid);
			q->nh++;
		}
		p = e < end ? e + 1 : end;
	}
	if (p < end)
		p++; /* the empty line */
	*body_end = end;
	return p;
}

static void request_free(struct request *q)
{
	for (size_t i = 0; i < q->nh; i++) {
		free(q->h[i].name);
		free(q->h[i].value);
	}
	q->nh = 0;
}

/* The owner's session must still answer its owner (a ping in its session). */
static void check_still_open(struct sb_http_core *core, const struct session *s)
{
	struct request q = {.method = "POST", .path = "/mcp"};
	const char *token = s->owner == 'A' ? "Bearer " TOKEN_A : "Bearer " TOKEN_B;
	struct header h[] = {{"Host", "127.0.0.1:8000"}, {"Authorization", (char *)token},
			     {"Content-Type", "application/json"}, {"Mcp-Session-Id", (char *)s->id}};
	memcpy(q.h, h, sizeof h);
	q.nh = sizeof h / sizeof *h;
	const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":\"still\",\"method\":\"ping\"}";
	struct sb_http_resp r;
	sb_http_core_handle(core, &(struct sb_http_req){.method = q.method, .path = q.path, .header = header,
							.hctx = &q, .peer = "fuzz"},
			    ping, strlen(ping), &r);
	if (r.status != 200)
		abort();
	sb_http_resp_clear(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_error why = {0};
	snprintf(why.msg, sizeof why.msg, "no sandbox while fuzzing");
	snprintf(why.hint, sizeof why.hint, "none");
	struct sb_mcp_server *srv = sb_mcp_server_new(&cfg, NULL, &why, NULL);
	struct sb_http_core *core = srv ? sb_http_core_new(srv, &bind, &tokens, &lim, "fuzz") : NULL;
	if (!core)
		abort();
	struct session sessions[MAX_SESSIONS];
	size_t nsessions = 0;
	char sid[SB_HANDLE_LEN] = "";

	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *sep = memmem(p, (size_t)(end - p), "\n%%\n", 4);
		const char *req_end = sep ? sep : end;
		struct request q = {0};
		const char *body_end;
		const char *body = parse(&q, p, req_end, &body_end, sid);
		struct sb_http_req hq = {.method = q.method, .path = q.path, .header = header, .hctx = &q, .peer = "fuzz"};
		struct sb_http_resp r;
		sb_http_core_handle(core, &hq, body, (size_t)(body_end - body), &r);
		check_answer(&r);
		if (trace)
			fprintf(stderr, "fuzz_http: %s %s -> %d %.*s\n", q.method, q.path, r.status,
				(int)(r.body_len < 160 ? r.body_len : 160), r.body ? r.body : "");

		/* Another client's session: DELETE must not end it (any refusal will
		 * do: a bad token is a 401 before the session is looked up). */
		const char *asked = header(&q, "Mcp-Session-Id");
		char caller = who(&q);
		for (size_t i = 0; asked && caller && i < nsessions; i++)
			if (!strcmp(sessions[i].id, asked) && sessions[i].owner != caller) {
				if (!strcmp(q.method, "DELETE") && r.status == 200)
					abort();
				check_still_open(core, &sessions[i]);
			}
		if (r.session_id[0]) {
			snprintf(sid, sizeof sid, "%s", r.session_id);
			bool known = false;
			for (size_t i = 0; i < nsessions; i++)
				known = known || !strcmp(sessions[i].id, sid);
			if (!known && caller && nsessions < MAX_SESSIONS) {
				snprintf(sessions[nsessions].id, sizeof sessions[nsessions].id, "%s", sid);
				sessions[nsessions++].owner = caller;
			}
		}
		/* A session ended by its owner is forgotten: it may not answer. */
		if (!strcmp(q.method, "DELETE") && r.status == 200 && asked)
			for (size_t i = 0; i < nsessions; i++)
				if (!strcmp(sessions[i].id, asked))
					sessions[i] = sessions[--nsessions];
		sb_http_resp_clear(&r);
		request_free(&q);
		sb_http_core_tick(core);
		p = sep ? sep + 4 : end;
	}
	sb_http_core_free(core);
	sb_mcp_server_free(srv);
	return 0;
}
