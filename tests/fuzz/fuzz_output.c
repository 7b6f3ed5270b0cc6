/* Fuzz target: the path of a job's output from the sandbox to the model —
 * the head+tail capture under a cap (runner/capture.c), its progress tail,
 * UTF-8 repair, what it displayed (runner/display_stream.c, core/display*.c),
 * the result object (core/result.c) and the text block a run
 * tool returns (tools/result_text.c). The code in the sandbox writes
 * whatever bytes it likes.
 *
 * Input: byte 0 picks the cap, byte 1 the size of the pieces the output
 * arrives in, byte 2 the verdict (exit code, signal, timeout, flood, a
 * sandbox error) and the tool, the rest is the output; each piece goes to
 * stdout, stderr or the display stream (runner/display_stream.c) by its
 * first byte. Checked: everything handed on is
 * valid UTF-8 (the result object holds the captured text itself, never the
 * placeholder for unencodable output, and the tool's text block is a JSON
 * string); output within the cap comes back whole (invalid bytes replaced);
 * a cut keeps the sizes it reports. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "core/display_out.h"
#include "runner/capture.h"
#include "tools/result_text.h"
#include "tools/run.h"
#include "util/buf.h"
#include "util/utf8.h"

static void check_stream(const struct sb_stream *s, const struct sb_buf *written, json_t *as_json)
{
	if (!s->data || !sb_utf8_valid(s->data, s->len, NULL) || s->total_bytes != written->len)
		abort();
	if (!json_is_string(as_json) || json_string_length(as_json) != s->len ||
	    memcmp(json_string_value(as_json), s->data, s->len))
		abort();
	if (!s->truncated) {
		size_t n;
		char *want = sb_utf8_sanitize(written->data ? written->data : "", written->len, &n);
		if (!want || n != s->len || memcmp(want, s->data, n))
			abort();
		free(want);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	size_t cap = 16 + (size_t)data[0] * 8;
	size_t piece = (size_t)data[1] + 1;
	unsigned v = data[2];
	data += 3;
	size -= 3;

	/* The supervisor's sink for a call, driven through its ops. */
	struct sb_capture_sink cs;
	if (sb_capture_sink_init(&cs, cap, NULL) < 0)
		abort();
	struct sb_sink *k = &cs.sink;
	SB_AUTO_BUF wout = {0};
	SB_AUTO_BUF werr = {0};
	for (size_t off = 0; off < size; off += piece) {
		size_t n = size - off < piece ? size - off : piece;
		bool to_err = data[off] & 1;
		if ((data[off] & 6) == 6) {
			/* the display stream's records (runner/display_stream.c) */
			if (k->ops->write(k, SB_STREAM_DISPLAY, (const char *)data + off, n) < 0)
				abort();
			continue;
		}
		if (k->ops->write(k, to_err ? SB_STREAM_STDERR : SB_STREAM_STDOUT, (const char *)data + off, n) < 0)
			abort();
		sb_buf_append(to_err ? &werr : &wout, data + off, n);
		/* A progress message quotes the tail of stdout so far. */
		size_t tl;
		char *tail = k->ops->tail(k, 64, &tl);
		if (!tail || !sb_utf8_valid(tail, tl, NULL))
			abort();
		free(tail);
	}

	struct sb_result r;
	sb_result_init(&r);
	r.max_bytes_per_stream = cap;
	r.timeout_s = 1 + v % 600;
	switch (v % 7) {
	case 0: r.exit_code = 0; break;
	case 1: r.exit_code = v; break;
	case 2: r.exit_code = -1; r.signal = SIGKILL; break;
	case 3: r.exit_code = -1; r.signal = (int)(v % 64) + 1; break;
	case 4: r.timed_out = true; break;
	case 5: r.output_limit_exceeded = true; break;
	case 6: {
		/* A sandbox error quoting the output, as an error message might. */
		size_t n;
		r.internal_error = sb_utf8_sanitize(wout.data ? wout.data : "", wout.len, &n);
		break;
	}
	}
	sb_capture_sink_finish(&cs, &r);
	json_t *j = sb_result_to_json(&r);
	if (!j)
		abort();
	check_stream(&r.out, &wout, json_object_get(j, "stdout"));
	check_stream(&r.err, &werr, json_object_get(j, "stderr"));
	json_decref(j);
	json_t *content = NULL;
	sb_display_content(&r.display, &content);
	json_decref(content);

	struct sb_config cfg;
	sb_config_defaults(&cfg);
	char *text = sb_result_text(&r, &sb_tools[(v / 7) % sb_tools_count], &cfg);
	json_t *t = text ? json_string(text) : NULL;
	if (!t)
		abort();
	json_decref(t);
	free(text);
	sb_result_free(&r);
	return 0;
}
