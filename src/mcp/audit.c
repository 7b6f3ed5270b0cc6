#include "mcp/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcp/sha256.h"

int sb_audit_open(struct sb_audit *a, const char *path, struct sb_error *err)
{
	a->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (a->fd < 0) {
		sb_fail_errno(err, "cannot open the audit log %s", path);
		return sb_hint(err, "set audit_log (--audit-log, SAGEBOX_AUDIT_LOG) to a writable file, or empty to turn it off");
	}
	pthread_mutex_init(&a->lock, NULL);
	return 0;
}

void sb_audit_close(struct sb_audit *a)
{
	if (a->fd >= 0) {
		close(a->fd);
		pthread_mutex_destroy(&a->lock);
	}
	a->fd = -1;
}

static void iso8601_now(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

void sb_audit_write(struct sb_audit *a, const struct sb_audit_record *r)
{
	char when[40], hash[65];
	iso8601_now(when, sizeof when);
	json_t *o = json_pack("{s:s, s:s}", "time", when, "tool", r->tool);
	if (r->code) {
		sb_sha256_hex(r->code, r->code_len, hash);
		json_object_set_new(o, "code_sha256", json_string(hash));
		json_object_set_new(o, "code_bytes", json_integer((json_int_t)r->code_len));
		json_object_set_new(o, "code_chars", json_integer((json_int_t)r->code_chars));
		json_object_set_new(o, "timeout_seconds", json_integer(r->timeout_s));
	}
	json_object_set_new(o, "backend", json_string(r->backend));
	json_t *verdict = json_string(r->verdict);
	json_object_set_new(o, "verdict", verdict ? verdict : json_string("?"));
	json_object_set_new(o, "duration_ms", json_integer((json_int_t)r->duration_ms));
	json_object_set_new(o, "ok", json_boolean(r->ok));

	char *text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text)
		return;
	size_t n = strlen(text);
	text[n] = '\n';
	pthread_mutex_lock(&a->lock);
	/* One write of the whole line: O_APPEND keeps lines from several
	 * servers sharing a log from interleaving. */
	ssize_t w;
	do
		w = write(a->fd, text, n + 1);
	while (w < 0 && errno == EINTR);
	pthread_mutex_unlock(&a->lock);
	if (w != (ssize_t)(n + 1))
		fprintf(stderr, "sagebox mcp: warning: writing the audit log failed: %s\n",
			w < 0 ? strerror(errno) : "short write");
	free(text);
}
