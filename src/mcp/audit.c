#include "mcp/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/fd.h"

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

static void hex(const unsigned char *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

void sb_audit_call_id(char id[17])
{
	unsigned char r[8];
	ssize_t n = getrandom(r, sizeof r, 0);
	if (n != (ssize_t)sizeof r) {
		/* No entropy (cannot happen after boot): still unique in this log. */
		static _Atomic unsigned long long seq;
		unsigned long long v = ((unsigned long long)getpid() << 32) ^ ++seq;
		memcpy(r, &v, sizeof r);
	}
	hex(r, sizeof r, id);
}

void sb_audit_sha256_hex(const void *data, size_t len, char out[65])
{
	struct sha256_ctx ctx;
	unsigned char digest[SHA256_DIGEST_SIZE];
	sha256_init(&ctx);
	sha256_update(&ctx, len, data);
	sha256_digest(&ctx, sizeof digest, digest);
	hex(digest, sizeof digest, out);
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

/* The fields both lines start with. */
static json_t *line_head(const char *event, const struct sb_audit_record *r)
{
	char when[40];
	iso8601_now(when, sizeof when);
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "time", when, "event", event, "call", r->call, "client",
			      r->client ? r->client : "", "tool", r->tool);
	if (r->client_info && r->client_info[0])
		json_object_set_new(o, "client_info", json_string(r->client_info));
	if (r->session[0])
		json_object_set_new(o, "session", json_string(r->session));
	if (r->job[0])
		json_object_set_new(o, "job", json_string(r->job));
	if (r->interact[0])
		json_object_set_new(o, "interact", json_string(r->interact));
	if (r->code) {
		json_object_set_new(o, "code_sha256", json_string(r->code_sha256));
		json_object_set_new(o, "code_bytes", json_integer((json_int_t)r->code_len));
		json_object_set_new(o, "code_chars", json_integer((json_int_t)r->code_chars));
	}
	return o;
}

static void append(struct sb_audit *a, json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!text)
		return;
	size_t n = strlen(text);
	text[n] = '\n';
	pthread_mutex_lock(&a->lock);
	/* One write of the whole line: O_APPEND keeps lines from several
	 * servers sharing a log from interleaving. */
	ssize_t w = SB_RETRY_EINTR(write(a->fd, text, n + 1));
	pthread_mutex_unlock(&a->lock);
	if (w != (ssize_t)(n + 1))
		fprintf(stderr, "sagebox mcp: warning: writing the audit log failed: %s\n",
			w < 0 ? strerror(errno) : "short write");
	free(text);
}

void sb_audit_started(struct sb_audit *a, struct sb_audit_record *r)
{
	if (r->code)
		sb_audit_sha256_hex(r->code, r->code_len, r->code_sha256);
	append(a, line_head("started", r));
}

void sb_audit_finished(struct sb_audit *a, const struct sb_audit_record *r)
{
	json_t *o = line_head("finished", r);
	if (r->timeout_s)
		json_object_set_new(o, "timeout_seconds", json_integer(r->timeout_s));
	json_object_set_new(o, "backend", json_string(r->backend));
	json_t *verdict = json_string(r->verdict);
	json_object_set_new(o, "verdict", verdict ? verdict : json_string("?"));
	json_object_set_new(o, "duration_ms", json_integer((json_int_t)r->duration_ms));
	json_object_set_new(o, "ok", json_boolean(r->ok));
	append(a, o);
}
