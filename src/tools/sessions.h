/* The session, file and background-job tools: descriptions for a
 * model, output schemas, handlers. The work is the runner's
 * (runner/sessions/sessions.h); these turn checked arguments into its calls and its
 * answers (or errors) into results a model can act on. */
#ifndef SAGEBOX_TOOLS_SESSIONS_H
#define SAGEBOX_TOOLS_SESSIONS_H

#include "core/handle.h"
#include "runner/jobs/jobs.h"
#include "runner/sessions/sessions.h"
#include "tools/tool.h"

/* The largest file_write: 8 MiB of decoded content. */
#define SB_FILE_WRITE_MAX (8u << 20)
/* Session and job ids are handles (core/handle.h); a longer argument is
 * refused by the schema, a wrong one gets the "unknown id" error. */
#define SB_HANDLE_MAX_CHARS (SB_HANDLE_LEN - 1)
/* Their x-mcp-header names: Mcp-Param-Session-Id, Mcp-Param-Job-Id. */
#define SB_SESSION_ID_HEADER "Session-Id"
#define SB_JOB_ID_HEADER "Job-Id"

/* Shared by the handlers (handler_shared.c). */
/* The runner's sessions, or NULL with an error result already in out. */
struct sb_sessions *sb_tools_sessions(struct sb_tool_ctx *ctx, struct sb_tool_result *out);
/* The error result when the sandbox is not usable here: err (no runner:
 * the server's reason), with a hint to call sandbox_status when it has none. */
void sb_tools_unusable(struct sb_tool_ctx *ctx, struct sb_tool_result *out, struct sb_error *err);
/* A tool acting on one of the calling client's own sessions or jobs: the
 * runner's sessions, the handle (the argument session_id or job_id) and
 * the error the runner fills when this client has no such session or job. */
struct sb_tools_handle {
	struct sb_sessions *ss;
	const char *id;
	struct sb_error err;
};
/* Fill h from args[key]; false with an error result already in out (the
 * sandbox is not usable here). */
bool sb_tools_handle(struct sb_tool_ctx *ctx, const json_t *args, const char *key, struct sb_tools_handle *h,
		     struct sb_tool_result *out);
/* The runner's answer for h: when failed, h->err (what is wrong and what
 * to do) is the error result. Returns failed. */
bool sb_tools_handle_failed(struct sb_tool_ctx *ctx, struct sb_tool_result *out, const struct sb_tools_handle *h,
			    bool failed);
/* An error result: the message, the hint, structured {error, hint}. */
void sb_tools_error(struct sb_tool_ctx *ctx, struct sb_tool_result *out, const struct sb_error *err);
/* A success: text, structured (stolen), the audit verdict "ok". */
void sb_tools_ok(struct sb_tool_ctx *ctx, struct sb_tool_result *out, const char *text, json_t *structured);
/* The output schema of a tool whose structured result is any object. */
json_t *sb_tools_open_schema(void);
/* A description as formatted text (malloc'd; NULL if out of memory). */
char *sb_tools_printed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* session_tools.c */
char *sb_session_open_description(const struct sb_config *cfg);
char *sb_session_list_description(const struct sb_config *cfg);
char *sb_session_reset_description(const struct sb_config *cfg);
char *sb_session_close_description(const struct sb_config *cfg);
char *sb_session_id_description(const struct sb_config *cfg);
char *sb_session_workspace_description(const struct sb_config *cfg);
void sb_session_open_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			     struct sb_tool_result *out);
void sb_session_list_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			     struct sb_tool_result *out);
void sb_session_reset_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			      struct sb_tool_result *out);
void sb_session_close_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			      struct sb_tool_result *out);
/* "sage", "python", "shell": the lang argument's choices. */
extern const char *const sb_tools_langs[];

/* workspace_tools.c */
/* The client whose workspaces a caller has (workspaces/store.h): the local
 * user's ("local") for stdio and the service, the token's over HTTP. */
int sb_tools_ws_client(const struct sb_tool_ctx *ctx, char *out, size_t n, struct sb_error *err);
/* "Kept for you: thesis (12.0 MiB, saved variables), ..." or "None is kept
 * yet." (the local user's; over HTTP a pointer to workspace_list). */
char *sb_workspaces_model_text(const struct sb_config *cfg);
/* A description (text, taken; NULL: out of memory) with that line
 * appended, so the model sees the names it may open (new; NULL if out of
 * memory). */
char *sb_workspaces_described(const struct sb_config *cfg, char *text);
char *sb_session_save_description(const struct sb_config *cfg);
char *sb_workspace_list_description(const struct sb_config *cfg);
void sb_session_save_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			     struct sb_tool_result *out);
void sb_workspace_list_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			       struct sb_tool_result *out);

/* file_tools.c */
char *sb_file_write_description(const struct sb_config *cfg);
char *sb_file_read_description(const struct sb_config *cfg);
char *sb_file_list_description(const struct sb_config *cfg);
char *sb_file_export_description(const struct sb_config *cfg);
int sb_file_write_check(const struct sb_tool *t, const json_t *args, char *msg, size_t size);
void sb_file_write_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			   struct sb_tool_result *out);
/* A file's MIME type by content, then by name (NULL: unknown); image: one
 * a client can show. Shared with resources/read (mcp/resources.c). */
const char *sb_file_mime_of(const char *p, size_t n, const char *path, bool *image);
/* Bytes as base64 (malloc'd; NULL: no memory). */
char *sb_file_base64(const char *p, size_t n);
void sb_file_read_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			  struct sb_tool_result *out);
void sb_file_list_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			  struct sb_tool_result *out);
void sb_file_export_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			    struct sb_tool_result *out);

/* job_tools.c */
char *sb_job_start_description(const struct sb_config *cfg);
char *sb_job_status_description(const struct sb_config *cfg);
char *sb_job_output_description(const struct sb_config *cfg);
char *sb_job_cancel_description(const struct sb_config *cfg);
char *sb_job_timeout_description(const struct sb_config *cfg);
int sb_job_start_check(const struct sb_tool *t, const json_t *args, char *msg, size_t size);
void sb_job_start_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			  struct sb_tool_result *out);
void sb_job_status_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			   struct sb_tool_result *out);
void sb_job_output_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			   struct sb_tool_result *out);
void sb_job_cancel_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			   struct sb_tool_result *out);

#endif
