/* The tools layer. Every tool the server offers is ONE ROW of data in
 * tools/table.c: its name, title, description, arguments (from which both
 * the input schema a client sees and the check the server makes are built,
 * so they cannot drift apart), output schema, annotations, handler, and
 * whether it takes one of the job slots. The protocol layer (mcp/) only
 * looks rows up and calls them; it never knows what a tool does, and no
 * tool name is written anywhere outside this directory.
 *
 * Adding a tool: one row in table.c, its handler in a file of this
 * directory (listed in meson.build). */
#ifndef SAGEBOX_TOOLS_TOOL_H
#define SAGEBOX_TOOLS_TOOL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "core/job.h"
#include "runner/runner.h"
#include "util/error.h"

enum sb_arg_type {
	SB_ARG_STRING,  /* text used as a C string: an embedded NUL (\u0000) is refused */
	SB_ARG_CODE,    /* code: any text, NUL included, counted in code points, and
			   recorded in the audit log by its hash and size */
	SB_ARG_INTEGER, /* JSON Schema "integer": 5 and 5.0 alike */
	SB_ARG_BOOLEAN,
	SB_ARG_OBJECT,  /* a JSON object, checked by the handler; recorded in the audit
			   log by the hash and size of its compact JSON, as code is */
};

/* One argument of a tool. */
struct sb_tool_arg {
	const char *name;
	enum sb_arg_type type;
	bool required;
	long long min, max;  /* INTEGER: the range; STRING, CODE: max is the longest in code points (0: any);
				OBJECT: max is the most members (0: any) */
	const char *const *choices; /* STRING: the allowed values (NULL-terminated; NULL: any) */
	const char *description;
	/* Instead of description, for text that names a setting (malloc'd). */
	char *(*describe)(const struct sb_config *cfg);
	/* STRING: the x-mcp-header name (2026-07-28): clients send the value
	 * as the HTTP header Mcp-Param-<header> too, so a router can send the
	 * call to the instance its handle names without reading the body. */
	const char *header;
};

/* MCP tool annotations (the title comes from the row). */
struct sb_tool_hints {
	bool read_only, destructive, idempotent, open_world;
};

/* What every call shares: the server as the tools see it. */
struct sb_tool_server {
	const struct sb_config *cfg;
	struct sb_runner *runner;   /* NULL: runner_err says why */
	struct sb_error runner_err;
};

/* One line of the audit log's story of a call. */
struct sb_audit_record {
	/* Set by the server before the handler runs. */
	char call[17];              /* links the "started" and "finished" lines */
	const char *client;         /* the caller's owner id */
	const char *client_info;    /* what the client calls itself ("LM Studio 0.3.17"), or "" */
	const char *tool;
	const char *code;           /* what runs: the SB_ARG_CODE argument, an SB_ARG_OBJECT's
				       JSON (then code_owned, freed after the finished line), or NULL */
	char *code_owned;
	size_t code_len, code_chars;
	char code_sha256[65];       /* filled by the audit log */
	/* The session and the background job the call concerns (from its
	 * session_id/job_id arguments, or set by the handler: session_open's
	 * new session, job_start's new job); "" none. */
	char session[SB_SESSION_ID_LEN];
	char job[SB_SESSION_ID_LEN];
	char interact[24];          /* interact_update's interact_id; "" none */
	/* Set by the handler. */
	unsigned timeout_s;         /* 0: none */
	char backend[64];
	char verdict[512];
	uint64_t duration_ms;       /* 0: the server's own measure */
	bool ok;
};

/* What a handler gets besides its arguments. */
struct sb_tool_ctx {
	const struct sb_tool_server *srv;
	const char *owner;          /* the calling client; sessions and jobs are keyed by it */
	const char *revision;       /* the request's protocol revision (a static string) */
	struct sb_run_hooks hooks;  /* progress to the caller's reply sink, its cancel fd */
	struct sb_audit_record *audit;
};

/* What a handler gives back: content blocks and the structured result. The
 * protocol layer turns it into a CallToolResult for the request's revision.
 * A failure of the code or of the sandbox is is_error, never a protocol error. */
struct sb_tool_result {
	json_t *content;            /* array of content blocks (owned) */
	json_t *structured;         /* structuredContent (owned), or NULL */
	bool is_error;
	bool cancelled;             /* cancelled through hooks.cancel_fd: nothing is sent */
};

struct sb_tool {
	const char *name;
	const char *title;
	char *(*description)(const struct sb_config *cfg);  /* malloc'd */
	const struct sb_tool_arg *args;                     /* ends with {NULL} */
	/* Rules the argument table cannot state (optional): 0, or -1 with msg. */
	int (*check)(const struct sb_tool *t, const json_t *args, char *msg, size_t size);
	json_t *(*output_schema)(void);
	struct sb_tool_hints hints;
	void (*handler)(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			struct sb_tool_result *out);
	bool needs_slot;            /* waits for one of max_concurrent job slots */
	bool task_support;          /* may run as an MCP task, a background job of its
				       code (execution.taskSupport "optional"; else "forbidden") */
	enum sb_lang lang;          /* the language a run tool runs */
	bool viewed;                /* its result is a run's: MCP Apps hosts show it in the
				       result viewer (mcp/resources.h) */
	bool opens;                 /* opens a session or starts a background job: refused
				       while the server drains (new work goes to other instances) */
	bool app_only;              /* called by the viewer, never by a model: listed (with
				       _meta.ui.visibility ["app"]) and callable only for a
				       client that declared the MCP Apps extension */
};

/* The table (tools/table.c). */
extern const struct sb_tool sb_tools[];
extern const size_t sb_tools_count;

/* The row named name, or NULL. */
const struct sb_tool *sb_tool_find(const char *name);
/* "a, b, c": every tool's name but the app-only ones, for messages and usage
 * text (malloc'd). */
char *sb_tool_names(void);

/* The instructions a client may give the model (malloc'd). */
char *sb_tools_instructions(const struct sb_config *cfg);

/* Tool arguments (tools/args.c). */
/* The input schema of a tool (new reference); headers: with the
 * arguments' x-mcp-header names. */
json_t *sb_tool_input_schema(const struct sb_tool *t, const struct sb_config *cfg, bool headers);
/* Check arguments (an object, or NULL for none) against the tool's
 * argument table and its check. Returns 0, or -1 with the reason in msg,
 * phrased for the model that wrote the call. */
int sb_tool_check_args(const struct sb_tool *t, const json_t *args, char *msg, size_t size);
/* The tool's SB_ARG_CODE argument, if it has one and it was given. */
const struct sb_tool_arg *sb_tool_code_arg(const struct sb_tool *t);
/* What the audit log records of a call as its code: the CODE argument's
 * text, or an OBJECT argument's compact JSON (malloc'd into *owned, which
 * the caller frees); NULL when the tool has neither or it was not given. */
const char *sb_tool_audited_text(const struct sb_tool *t, const json_t *args, size_t *len, char **owned);
/* Values of checked arguments. */
const char *sb_tool_arg_text(const json_t *args, const char *name, size_t *len);
long long sb_tool_arg_int(const json_t *args, const char *name, long long dflt);

/* Results (tools/args.c). */
/* Append a text block (the text is copied; text that is not UTF-8 is
 * replaced by a note saying so). */
void sb_tool_result_text(struct sb_tool_result *r, const char *text);
void sb_tool_result_free(struct sb_tool_result *r);
/* "native" from a result's sandbox ("backend": "native") or a status
 * ({"backend": {"name": "native"}}); the configured backend otherwise. */
void sb_tool_backend_of(const struct sb_tool_server *srv, const json_t *report, char *buf, size_t size);

#endif
