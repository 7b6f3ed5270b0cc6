/* file_write, file_read, file_list, file_export: a session's workspace
 * files. Every path is resolved inside the session's own sandbox, beneath
 * /work (the runner asks the session's controller); this layer only moves
 * bytes: base64 both ways, images as MCP image content, and file_export's
 * copy into the user's export_dir under a fresh name. */
#include <errno.h>
#include <fcntl.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/sessions.h"
#include "util/buf.h"
#include "util/fd.h"
#include "util/utf8.h"

/* An image file_read returns whole, as image content, up to this size. */
#define IMAGE_MAX (4u << 20)


char *sb_file_write_description(const struct sb_config *cfg)
{
	return sb_tools_printed("Write a file in a session's workspace (/work; relative paths are relative to it), creating "
		       "missing directories; an existing file is replaced (or appended to with append: true). Give "
		       "the content as text (content) or as base64 (content_base64) for binary data, at most 8 MiB. "
		       "The workspace holds at most %s in all. Paths outside /work, '..' and symbolic links that "
		       "lead out are refused. The session's code sees the file at once.",
		       cfg->workspace_size);
}

char *sb_file_read_description(const struct sb_config *cfg)
{
	return sb_tools_printed("Read a file from a session's workspace (/work). Text comes back as text; other files as "
		       "base64 with their MIME type; a PNG, JPEG, GIF, WebP or SVG image comes back as an image you "
		       "can see (up to 4 MiB). Long files: at most %zu KiB per call; pass offset (and length) to "
		       "read further.",
		       cfg->limits.output_bytes / 1024);
}

char *sb_file_list_description(const struct sb_config *cfg)
{
	(void)cfg;
	return sb_tools_printed("List a directory of a session's workspace (default /work): each entry's name, type (file, "
		       "directory, symlink, other), size in bytes and modification time (Unix seconds).");
}

char *sb_file_export_description(const struct sb_config *cfg)
{
	if (!cfg->export_dir[0])
		return sb_tools_printed("Copy a file from a session's workspace to the user's computer. Turned off here: the "
			       "user has not set export_dir, so this tool always refuses.");
	return sb_tools_printed("Copy a file from a session's workspace (/work) to the user's computer, into %s, under a "
		       "new name (never replacing a file there). Returns the path on the user's computer. Use it for "
		       "results the user asked to keep.",
		       cfg->export_dir);
}

/* ---- file_write */
int sb_file_write_check(const struct sb_tool *t, const json_t *args, char *msg, size_t size)
{
	bool text = json_object_get(args, "content") != NULL, b64 = json_object_get(args, "content_base64") != NULL;
	if (text == b64) {
		snprintf(msg, size, "Invalid arguments for tool %s: give exactly one of \"content\" (text) and "
				    "\"content_base64\" (binary data in base64)", t->name);
		return -1;
	}
	return 0;
}

/* base64 (standard alphabet, whitespace ignored) to bytes. */
static int unbase64(const char *in, size_t n, struct sb_buf *out)
{
	char *clean = malloc(n + 1);
	uint8_t *dec = clean ? malloc(BASE64_DECODE_LENGTH(n) + 1) : NULL;
	size_t k = 0, got = BASE64_DECODE_LENGTH(n) + 1;
	for (size_t i = 0; dec && i < n; i++)
		if (in[i] != ' ' && in[i] != '\n' && in[i] != '\r' && in[i] != '\t')
			clean[k++] = in[i];
	struct base64_decode_ctx ctx;
	base64_decode_init(&ctx);
	int rc = dec && base64_decode_update(&ctx, &got, dec, k, clean) && base64_decode_final(&ctx) &&
			 !sb_buf_append(out, dec, got)
		 ? 0
		 : -1;
	free(clean);
	free(dec);
	return rc;
}

void sb_file_write_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			   struct sb_tool_result *out)
{
	(void)t;
	struct sb_sessions *ss = sb_tools_sessions(ctx, out);
	if (!ss)
		return;
	struct sb_error err = {0};
	size_t n = 0;
	const char *data = sb_tool_arg_text(args, "content", &n);
	SB_AUTO_BUF bin = {0};
	if (!data) {
		size_t bn;
		const char *b = sb_tool_arg_text(args, "content_base64", &bn);
		if (unbase64(b, bn, &bin)) {
			sb_fail(&err, "content_base64 is not valid base64");
			sb_hint(&err, "use the standard alphabet (A-Z a-z 0-9 + /) with '=' padding, or pass text as content");
			sb_tools_error(ctx, out, &err);
			return;
		}
		data = bin.data ? bin.data : "";
		n = bin.len;
	}
	if (n > SB_FILE_WRITE_MAX) {
		sb_fail(&err, "the content is %zu bytes; one file_write takes at most %u MiB", n, SB_FILE_WRITE_MAX >> 20);
		sb_hint(&err, "write it in parts with append: true, or let code in the session produce it");
		sb_tools_error(ctx, out, &err);
		return;
	}
	json_t *reply = NULL;
	const char *path = sb_tool_arg_text(args, "path", NULL);
	bool append = json_is_true(json_object_get(args, "append"));
	if (sb_session_write(ss, ctx->owner, sb_tool_arg_text(args, "session_id", NULL), path, data, n, append, &reply,
			     &err)) {
		sb_tools_error(ctx, out, &err);
		return;
	}
	char *text = sb_tools_printed("Wrote %lld bytes to %s.", (long long)json_integer_value(json_object_get(reply, "bytes")),
			     json_string_value(json_object_get(reply, "path")));
	json_t *st = json_pack("{s:O, s:O}", "path", json_object_get(reply, "path"), "bytes", json_object_get(reply, "bytes"));
	json_decref(reply);
	sb_tools_ok(ctx, out, text ? text : "written", st);
	free(text);
}

/* ---- file_read */
static int collect(void *ctx, const char *p, size_t n)
{
	return sb_buf_append(ctx, p, n);
}

/* The MIME type by content, then by name. image: one a client can show. */
const char *sb_file_mime_of(const char *p, size_t n, const char *path, bool *image)
{
	static const struct {
		const char *magic;
		size_t len;
		const char *mime;
	} magic[] = {
		{"\x89PNG\r\n\x1a\n", 8, "image/png"}, {"\xff\xd8\xff", 3, "image/jpeg"},
		{"GIF87a", 6, "image/gif"},           {"GIF89a", 6, "image/gif"},
		{"%PDF-", 5, "application/pdf"},
	};
	*image = false;
	for (size_t i = 0; i < sizeof magic / sizeof magic[0]; i++)
		if (n >= magic[i].len && !memcmp(p, magic[i].magic, magic[i].len)) {
			*image = !strncmp(magic[i].mime, "image/", 6);
			return magic[i].mime;
		}
	if (n >= 12 && !memcmp(p, "RIFF", 4) && !memcmp(p + 8, "WEBP", 4))
		return *image = true, "image/webp";
	const char *dot = strrchr(path, '.');
	if (dot && !strcmp(dot, ".svg") && memmem(p, n < 4096 ? n : 4096, "<svg", 4))
		return *image = true, "image/svg+xml";
	return NULL;
}

/* Bytes as base64 (malloc'd). */
char *sb_file_base64(const char *p, size_t n)
{
	char *enc = malloc(BASE64_ENCODE_RAW_LENGTH(n) + 1);
	if (enc) {
		base64_encode_raw(enc, n, (const uint8_t *)p);
		enc[BASE64_ENCODE_RAW_LENGTH(n)] = '\0';
	}
	return enc;
}

void sb_file_read_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			  struct sb_tool_result *out)
{
	(void)t;
	struct sb_sessions *ss = sb_tools_sessions(ctx, out);
	if (!ss)
		return;
	const char *id = sb_tool_arg_text(args, "session_id", NULL), *path = sb_tool_arg_text(args, "path", NULL);
	uint64_t cap = ctx->srv->cfg->limits.output_bytes;
	uint64_t offset = (uint64_t)sb_tool_arg_int(args, "offset", 0);
	uint64_t length = (uint64_t)sb_tool_arg_int(args, "length", (long long)cap);
	if (length > cap)
		length = cap;
	SB_AUTO_BUF data = {0};
	json_t *meta = NULL;
	struct sb_error err = {0};
	if (sb_session_read(ss, ctx->owner, id, path, offset, length, collect, &data, &meta, &err)) {
		sb_tools_error(ctx, out, &err);
		return;
	}
	uint64_t size = (uint64_t)json_integer_value(json_object_get(meta, "size"));
	const char *shown = json_string_value(json_object_get(meta, "path"));
	if (!shown)
		shown = path;
	bool image = false;
	const char *mime = sb_file_mime_of(data.data ? data.data : "", data.len, shown, &image);
	const char *kind = mime ? mime : "?";
	/* An image is useful whole: read the rest of it. */
	if (image && offset == 0 && size <= IMAGE_MAX && data.len < size) {
		json_t *more = NULL;
		if (!sb_session_read(ss, ctx->owner, id, path, data.len, size - data.len, collect, &data, &more, &err))
			json_decref(more);
	}
	bool whole = offset == 0 && data.len == size;
	bool text = !mime && sb_utf8_valid(data.data ? data.data : "", data.len, NULL) &&
		    !memchr(data.data ? data.data : "", '\0', data.len);
	uint64_t next = offset + data.len;
	char *line;
	if (image && whole)
		line = sb_tools_printed("[%s: %s image, %llu bytes]", shown, kind, (unsigned long long)size);
	else if (image)
		line = sb_tools_printed("[%s is a %s image of %llu bytes, more than the %u MiB shown as an image; read it in parts "
			       "with offset to get base64]", shown, kind, (unsigned long long)size, IMAGE_MAX >> 20);
	else if (whole)
		line = sb_tools_printed("[%s: %llu bytes%s]", shown, (unsigned long long)size, text ? "" : ", base64 below");
	else
		line = sb_tools_printed("[%s: bytes %llu to %llu of %llu%s%s]", shown, (unsigned long long)offset,
			       (unsigned long long)next, (unsigned long long)size, text ? "" : ", base64 below",
			       next < size ? "; call again with offset for more" : "");
	char *b64 = text || (image && !whole) ? NULL : sb_file_base64(data.data ? data.data : "", data.len);
	if (image && whole && b64) {
		/* An image the model can see, and a line naming it (some
		 * clients show images to the user only). */
		sb_tool_result_text(out, line ? line : "");
		json_array_append_new(out->content, json_pack("{s:s, s:s, s:s}", "type", "image", "data", b64,
							      "mimeType", kind));
	} else {
		sb_buf_append(&data, "", 0);
		SB_AUTO_BUF b = {0};
		sb_buf_printf(&b, "%s\n%s", line ? line : "", text ? (data.data ? data.data : "") : b64 ? b64 : "");
		sb_tool_result_text(out, b.data ? b.data : "");
	}
	free(line);
	json_t *st = json_pack("{s:s, s:I, s:I, s:I, s:s, s:b}", "path", shown, "size", (json_int_t)size, "offset",
			       (json_int_t)offset, "next_offset", (json_int_t)next, "encoding",
			       text ? "text" : "base64", "image", image && whole);
	json_object_set_new(st, "mime_type", mime ? json_string(mime) : text ? json_string("text/plain")
									     : json_string("application/octet-stream"));
	if (b64 && !(image && whole))
		json_object_set_new(st, "content_base64", json_string(b64));
	free(b64);
	json_decref(meta);
	snprintf(ctx->audit->verdict, sizeof ctx->audit->verdict, "ok");
	ctx->audit->ok = true;
	out->structured = st;
}

/* ---- file_list */
void sb_file_list_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			  struct sb_tool_result *out)
{
	(void)t;
	struct sb_sessions *ss = sb_tools_sessions(ctx, out);
	if (!ss)
		return;
	json_t *reply = NULL;
	struct sb_error err = {0};
	if (sb_session_files(ss, ctx->owner, sb_tool_arg_text(args, "session_id", NULL),
			     sb_tool_arg_text(args, "path", NULL), &reply, &err)) {
		sb_tools_error(ctx, out, &err);
		return;
	}
	json_t *entries = json_object_get(reply, "entries");
	SB_AUTO_BUF b = {0};
	sb_buf_printf(&b, "%s:%s", json_string_value(json_object_get(reply, "path")),
		      json_array_size(entries) ? "" : " (empty)");
	size_t i;
	json_t *e;
	json_array_foreach(entries, i, e)
		sb_buf_printf(&b, "\n%s%s  %s  %lld bytes", json_string_value(json_object_get(e, "name")),
			      !strcmp(json_string_value(json_object_get(e, "type")), "directory") ? "/" : "",
			      json_string_value(json_object_get(e, "type")),
			      (long long)json_integer_value(json_object_get(e, "size")));
	if (json_is_true(json_object_get(reply, "cut")))
		sb_buf_printf(&b, "\n[only the first %zu entries are shown]", json_array_size(entries));
	json_t *st = json_pack("{s:O, s:O, s:O}", "path", json_object_get(reply, "path"), "entries", entries, "cut",
			       json_object_get(reply, "cut"));
	json_decref(reply);
	sb_tools_ok(ctx, out, b.data ? b.data : "", st);
}

/* ---- file_export */
/* A name for the host: the file's last component, with every character
 * but letters, digits, '.', '_' and '-' replaced, no leading dot (no
 * hidden files, no "." or ".."), at most 100 bytes. */
static void sanitised(const char *path, char *out, size_t n)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t k = 0;
	for (const char *p = base; *p && k + 1 < n && k < 100; p++) {
		unsigned char c = (unsigned char)*p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
			  c == '-' || (c == '.' && k > 0);
		out[k++] = ok ? (char)c : '_';
	}
	out[k] = '\0';
	if (!k || strspn(out, "_") == k)
		snprintf(out, n, "exported-file");
}

/* Create name (or name-1.ext, name-2.ext, ...) in dirfd: O_CREAT|O_EXCL
 * never replaces a file and never follows a symlink planted under that
 * name (it fails with EEXIST, and the next name is tried). */
static int create_fresh(int dirfd, const char *name, char *used, size_t n)
{
	const char *dot = strrchr(name, '.');
	int stem = dot && dot != name ? (int)(dot - name) : (int)strlen(name);
	for (int i = 0; i < 1000; i++) {
		if (i == 0)
			snprintf(used, n, "%s", name);
		else
			snprintf(used, n, "%.*s-%d%s", stem, name, i, name + stem);
		int fd = openat(dirfd, used, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/* Where file_export's bytes go, and how many went. */
struct copy_out {
	int fd;
	uint64_t written;
};

static int to_fd(void *ctx, const char *p, size_t n)
{
	struct copy_out *o = ctx;
	if (sb_write_all(o->fd, p, n) < 0)
		return -1;
	o->written += n;
	return 0;
}

void sb_file_export_handler(const struct sb_tool *t, const json_t *args, struct sb_tool_ctx *ctx,
			    struct sb_tool_result *out)
{
	(void)t;
	const struct sb_config *cfg = ctx->srv->cfg;
	struct sb_error err = {0};
	if (!cfg->export_dir[0]) {
		sb_fail(&err, "file_export is turned off: the user has not chosen a directory for exported files");
		sb_hint(&err, "tell the user the file's path in the session; they can enable exports with --export-dir DIR");
		sb_tools_error(ctx, out, &err);
		return;
	}
	struct sb_sessions *ss = sb_tools_sessions(ctx, out);
	if (!ss)
		return;
	const char *path = sb_tool_arg_text(args, "path", NULL);
	char name[128], used[160];
	sanitised(path, name, sizeof name);
	SB_AUTO_FD dirfd = open(cfg->export_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	SB_AUTO_FD fd = dirfd < 0 ? -1 : create_fresh(dirfd, name, used, sizeof used);
	if (fd < 0) {
		sb_fail_errno(&err, "cannot create a file in the export directory %s", cfg->export_dir);
		sb_hint(&err, "tell the user: export_dir must be a writable directory");
		sb_tools_error(ctx, out, &err);
		return;
	}
	json_t *meta = NULL;
	struct copy_out co = {.fd = fd};
	const char *sid = sb_tool_arg_text(args, "session_id", NULL);
	/* Its size first (0 bytes read): one too large is refused uncopied. */
	int rc = sb_session_read(ss, ctx->owner, sid, path, 0, 0, to_fd, &co, &meta, &err);
	json_int_t size = rc ? 0 : json_integer_value(json_object_get(meta, "size"));
	if (!rc && (uint64_t)size <= cfg->workspace_bytes) {
		json_decref(meta);
		meta = NULL;
		rc = sb_session_read(ss, ctx->owner, sid, path, 0, cfg->workspace_bytes, to_fd, &co, &meta, &err);
		size = rc ? 0 : json_integer_value(json_object_get(meta, "size"));
	}
	if (!rc && (uint64_t)size != co.written) {
		/* A sparse file can be larger than the workspace (a
		 * 100 MiB one in a 16 MiB workspace was copied cut to 16 MiB and
		 * reported whole); a file can change while it is copied. */
		if ((uint64_t)size > cfg->workspace_bytes)
			sb_fail(&err, "%s is %lld bytes, more than file_export copies (at most %llu bytes, the workspace "
				"size): nothing was exported", json_string_value(json_object_get(meta, "path")),
				(long long)size, (unsigned long long)cfg->workspace_bytes);
		else
			sb_fail(&err, "%s changed while it was copied (%llu of %lld bytes): nothing was exported",
				json_string_value(json_object_get(meta, "path")), (unsigned long long)co.written,
				(long long)size);
		sb_hint(&err, "export a smaller file (split it, or compress it in the session first), or tell the user "
			      "where it is in the session");
		json_decref(meta);
		rc = -1;
	}
	if (rc) {
		unlinkat(dirfd, used, 0); /* nothing half-copied is left behind */
		sb_tools_error(ctx, out, &err);
		return;
	}
	char host[PATH_MAX + 200];
	snprintf(host, sizeof host, "%s/%s", cfg->export_dir, used);
	char *text = sb_tools_printed("Copied %s (%llu bytes) to %s on the user's computer.",
			     json_string_value(json_object_get(meta, "path")), (unsigned long long)co.written, host);
	json_t *st = json_pack("{s:O, s:s, s:I}", "path", json_object_get(meta, "path"), "host_path", host, "bytes",
			       (json_int_t)co.written);
	json_decref(meta);
	sb_tools_ok(ctx, out, text ? text : host, st);
	free(text);
}
