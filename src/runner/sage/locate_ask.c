/* runner/sage/locate.c's question, asked: one command in a sandbox of a backend,
 * its output collected (bounded, with a deadline), its marked line of JSON
 * taken as the answer, or its last words kept for the error. */
#include "runner/sage/locate_ask.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/pipes.h"
#include "util/clock.h"
#include "util/fd.h"

#define ASK_SECONDS 120 /* a first container start of a large image is slow */
#define CAP 65536

struct collected {
	char buf[CAP];
	size_t len;
};

static int collect(void *ctx, const char *p, size_t n)
{
	struct collected *c = ctx;
	size_t room = sizeof c->buf - 1 - c->len;
	if (n > room)
		n = room;
	memcpy(c->buf + c->len, p, n);
	c->len += n;
	c->buf[c->len] = '\0';
	return 0;
}

/* The last line that says something, for an error message. */
static void last_words(const char *s, char *out, size_t n)
{
	const char *end = s + strlen(s);
	while (end > s && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\r'))
		end--;
	const char *start = end;
	while (start > s && start[-1] != '\n')
		start--;
	size_t len = (size_t)(end - start);
	if (len >= n)
		start = end - (len = n - 1);
	memcpy(out, start, len);
	out[len] = '\0';
}

/* What it returns: locate.h. */
int sb_locate_ask(const struct sb_backend *be, const struct sb_config *cfg, const char *const *argv, const char *mark,
		  json_t **answer, char *said, size_t sn, struct sb_error *err)
{
	/* On the host (no isolation) sagebox asks the user's own sage, no model
	 * code: no process cap there, as RLIMIT_NPROC counts every process of
	 * the user (a desktop's hundreds, or other sandboxes run as the same
	 * user), and the ask would fail to fork where the user has many. */
	struct sb_limits lim = cfg->limits;
	if (!sb_backend_has(be, SB_CAP_ISOLATED))
		lim.pids = 0;
	struct sb_sandbox_req req = {.argv = argv, .limits = &lim, .lifetime_s = ASK_SECONDS};
	struct sb_sandbox sb;
	int pidfd;
	*answer = NULL;
	if (sb_spawn_piped(be, &req, &sb, &pidfd, err) != 0)
		return -1;
	sb_close(&sb.stdin_fd);
	struct collected *out = calloc(1, sizeof *out), *errs = calloc(1, sizeof *errs);
	uint64_t deadline = sb_now_ms() + ASK_SECONDS * 1000ull;
	bool timed_out = false;
	while (out && errs && (sb.stdout_fd >= 0 || sb.stderr_fd >= 0)) {
		uint64_t now = sb_now_ms();
		if (now >= deadline) {
			timed_out = true;
			break;
		}
		struct pollfd p[2] = {{sb.stdout_fd, POLLIN, 0}, {sb.stderr_fd, POLLIN, 0}};
		if (poll(p, 2, (int)(deadline - now)) < 0 && errno != EINTR)
			break;
		sb_pipe_drain(&sb.stdout_fd, 4, collect, out);
		sb_pipe_drain(&sb.stderr_fd, 4, collect, errs);
	}
	if (sb.stdout_fd >= 0 || sb.stderr_fd >= 0)
		sb_backend_kill(&sb); /* out of time */
	sb_sandbox_close_fds(&sb);
	sb_close(&pidfd);
	struct sb_exit ex = {0};
	struct sb_error werr = {0};
	sb_backend_wait(&sb, &ex, &werr);
	json_decref(sb.enforced);
	if (!out || !errs) {
		free(out), free(errs);
		return sb_fail(err, "out of memory");
	}
	char nl_mark[64];
	snprintf(nl_mark, sizeof nl_mark, "\n%s", mark);
	const char *m = strstr(out->buf, nl_mark);
	json_t *j = m ? json_loads(m + 1 + strlen(mark), JSON_DISABLE_EOF_CHECK, NULL) : NULL;
	const char *exe = json_string_value(json_object_get(j, "executable"));
	if (exe && exe[0] == '/') {
		free(out), free(errs);
		*answer = j;
		return 1;
	}
	json_decref(j);
	char words[300];
	last_words(errs->len ? errs->buf : out->buf, words, sizeof words);
	free(out), free(errs);
	if (timed_out)
		snprintf(said, sn, "no answer in %d s", ASK_SECONDS);
	else if (ex.signal)
		snprintf(said, sn, "killed by signal %d%s%s", ex.signal, words[0] ? ": " : "", words);
	else
		snprintf(said, sn, "exit status %d%s%s", ex.exit_code, words[0] ? ": " : "", words);
	return 0;
}

