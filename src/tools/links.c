#include "tools/links.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

/* A file's MIME type by its extension: one row each. */
static const struct {
	const char *ext, *mime;
} mime_types[] = {
	{".png", "image/png"},   {".svg", "image/svg+xml"},     {".jpg", "image/jpeg"}, {".pdf", "application/pdf"},
	{".txt", "text/plain"},  {".csv", "text/csv"},          {".html", "text/html"}, {".json", "application/json"},
	{".tex", "text/x-tex"},  {".py", "text/x-python"},      {".sage", "text/x-python"},
};

static const char *mime_of(const char *path)
{
	size_t n = strlen(path);
	for (size_t i = 0; i < sizeof mime_types / sizeof *mime_types; i++) {
		size_t k = strlen(mime_types[i].ext);
		if (n > k && !strcmp(path + n - k, mime_types[i].ext))
			return mime_types[i].mime;
	}
	return NULL;
}

static void put_encoded(struct sb_buf *b, const char *p)
{
	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-._~/", c))
			sb_buf_printf(b, "%c", c);
		else
			sb_buf_printf(b, "%%%02X", c);
	}
}

void sb_tool_result_links(struct sb_tool_result *r, const char *sid, const struct sb_result *res)
{
	size_t i;
	json_t *v;
	json_array_foreach(res->written, i, v) {
		const char *path = json_string_value(v);
		SB_AUTO_BUF uri = {0};
		sb_buf_printf(&uri, SB_SESSION_URI_PREFIX "%s/", sid);
		put_encoded(&uri, path);
		if (!uri.data)
			continue;
		json_t *block = json_pack("{s:s, s:s, s:s}", "type", "resource_link", "uri", uri.data, "name", path);
		if (!block)
			continue;
		const char *mime = mime_of(path);
		if (mime)
			json_object_set_new(block, "mimeType", json_string(mime));
		if (!r->content)
			r->content = json_array();
		json_array_append_new(r->content, block);
	}
	if (res->written_more) {
		char line[200];
		snprintf(line, sizeof line, "[%u more files written in /work are not linked: a result links at most %d]",
			 res->written_more, SB_WRITTEN_MAX);
		sb_tool_result_text(r, line);
	}
}
