#include "transport/http_sse.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/fd.h"

/* An SSE response's reader. */
struct sse {
	const atomic_bool *stopping;
	struct sb_http_exchange *x;   /* its own reference */
	int fd;
	struct sb_buf out;
	size_t off;
	unsigned quiet_s;
};

bool sb_http_peer_gone(const atomic_bool *stopping, int fd)
{
	if (atomic_load(stopping))
		return true;
	struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
	if (fd < 0 || SB_RETRY_EINTR(poll(&p, 1, 0)) <= 0)
		return false;
	return p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL);
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sse *s = cls;
	for (;;) {
		if (s->off < s->out.len) {
			size_t n = s->out.len - s->off;
			n = n < max ? n : max;
			memcpy(buf, s->out.data + s->off, n);
			s->off += n;
			return (ssize_t)n;
		}
		s->out.len = s->off = 0;
		struct sb_http_msg *m = sb_http_exchange_take(s->x);
		if (m) {
			sb_buf_printf(&s->out, "event: message\ndata: %s\n\n", m->text);
			sb_http_msg_free(m);
			s->quiet_s = 0;
			continue;
		}
		if (sb_http_exchange_done(s->x))
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (sb_http_peer_gone(s->stopping, s->fd))
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (!sb_http_exchange_wait(s->x, 1000) && ++s->quiet_s >= 15) {
			/* An SSE comment now and then keeps proxies and idle timers
			 * from closing a long call's stream. */
			sb_buf_append(&s->out, ":\n\n", 3);
			s->quiet_s = 0;
		}
	}
}

static void sse_free(void *cls)
{
	struct sse *s = cls;
	sb_http_exchange_unref(s->x);
	sb_buf_free(&s->out);
	free(s);
}

struct MHD_Response *sb_http_sse_response(struct sb_http_exchange *x, int fd, const atomic_bool *stopping)
{
	struct sse *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->stopping = stopping;
	s->x = x;
	s->fd = fd;
	sb_http_exchange_ref(x);
	struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, sse_read, s, sse_free);
	if (!resp) {
		sse_free(s);
		return NULL;
	}
	MHD_add_response_header(resp, "Content-Type", "text/event-stream");
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	return resp;
}
