#include "transport/stdio.h"
#include "util/fd.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp/idscan.h"
#include "transport/linereader.h"
#include "util/trace.h"

struct sb_stdio {
	int in_fd, out_fd;
	size_t max;
	struct sb_line_reader *reader;
	pthread_mutex_t write_lock;
	bool broken;        /* the output failed: the client is gone */
	int stop[2];        /* self-pipe: [1] is written to stop serving */
};

struct sb_stdio *sb_stdio_new(int in_fd, int out_fd, size_t max_message)
{
	struct sb_stdio *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->in_fd = in_fd;
	t->out_fd = out_fd;
	t->max = max_message;
	t->reader = sb_line_reader_new(in_fd, max_message);
	if (!t->reader || pipe2(t->stop, O_CLOEXEC | O_NONBLOCK) < 0) {
		sb_line_reader_free(t->reader);
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->write_lock, NULL);
	return t;
}

void sb_stdio_free(struct sb_stdio *t)
{
	if (!t)
		return;
	sb_line_reader_free(t->reader);
	sb_close(&t->stop[0]);
	sb_close(&t->stop[1]);
	pthread_mutex_destroy(&t->write_lock);
	free(t);
}

int sb_stdio_stop_fd(struct sb_stdio *t)
{
	return t->stop[1];
}

static int stdio_send(void *ctx, const json_t *msg)
{
	struct sb_stdio *t = ctx;
	/* Compact JSON escapes control characters, so a message is one line. */
	char *text = json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(15));
	if (!text) {
		fprintf(stderr, "sagebox mcp: could not serialise a message\n");
		return -1;
	}
	size_t n = strlen(text);
	int rc = 0;
	pthread_mutex_lock(&t->write_lock);
	if (t->broken) {
		rc = -1;
	} else {
		text[n] = '\n'; /* replaces the NUL; the length is kept in n */
		int w = sb_write_all(t->out_fd, text, n + 1), saved = errno;
		sb_trace_stamp("sent");
		errno = saved;
		if (w < 0) {
			fprintf(stderr, "sagebox mcp: writing to the client failed: %s; stopping\n",
				strerror(errno));
			t->broken = true;
			rc = -1;
			char b = 'x';
			(void)SB_RETRY_EINTR(write(t->stop[1], &b, 1));
		}
	}
	pthread_mutex_unlock(&t->write_lock);
	free(text);
	return rc;
}

static void scan_sink(void *ctx, const char *data, size_t len)
{
	sb_idscan_feed(ctx, data, len);
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

static int serve(struct sb_stdio *t, struct sb_mcp_client *client, const struct sb_mcp_sink *sink)
{
	for (;;) {
		struct sb_idscan scan;
		const char *line = NULL;
		size_t len = 0;
		sb_idscan_init(&scan);
		enum sb_read_status st = sb_line_reader_next(t->reader, t->stop[0], &line, &len, scan_sink, &scan);
		switch (st) {
		case SB_READ_LINE:
			sb_trace_stamp("recv");
			if (!blank(line, len))
				sb_mcp_handle_message(client, line, len, sink);
			break;
		case SB_READ_TOO_LONG: {
			json_t *id = sb_idscan_id(&scan);
			sb_mcp_handle_oversize(client, len, t->max, id, sink);
			json_decref(id);
			break;
		}
		case SB_READ_EOF:
		case SB_READ_STOP:
			return 0;
		case SB_READ_ERROR:
			return -1;
		}
		sb_mcp_client_idle(client);
	}
}

int sb_stdio_serve(struct sb_stdio *t, struct sb_mcp_server *srv)
{
	return sb_stdio_serve_as(t, srv, "stdio");
}

int sb_stdio_serve_as(struct sb_stdio *t, struct sb_mcp_server *srv, const char *owner)
{
	/* One stream carries the answers of every request and the rest. */
	const struct sb_mcp_sink sink = {.send = stdio_send, .ctx = t};
	struct sb_mcp_client *client = sb_mcp_client_new(srv, owner, &sink);
	if (!client) {
		errno = ENOMEM;
		return -1;
	}
	int rc = serve(t, client, &sink);
	/* The input ended (or a signal): kill running jobs, join every thread. */
	int saved = errno;
	sb_mcp_client_free(client);
	errno = saved;
	return rc;
}
