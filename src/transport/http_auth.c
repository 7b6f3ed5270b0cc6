#include "transport/http_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fd.h"
#include "util/statedir.h"

static void digest(const char *s, size_t n, uint8_t out[32])
{
	struct sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, n, (const uint8_t *)s);
	sha256_digest(&c, SHA256_DIGEST_SIZE, out);
}

const struct sb_http_token *sb_http_tokens_match(const struct sb_http_tokens *t, const char *presented, size_t len)
{
	/* Compared as SHA-256 digests with nettle's memeql_sec: equal lengths,
	 * no early exit, so neither the length nor a right prefix of a token
	 * can be learned from how long a refusal takes (a timing attack). */
	uint8_t d[32];
	digest(presented, len, d);
	const struct sb_http_token *found = NULL;
	for (size_t i = 0; i < t->n; i++)
		if (memeql_sec(d, t->v[i].digest, sizeof d) && !found)
			found = &t->v[i];
	return found;
}

void sb_http_tokens_free(struct sb_http_tokens *t)
{
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

static bool name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@", s[i]))
			return false;
	return true;
}

static bool token_ok(const char *s, size_t n)
{
	if (n < SB_TOKEN_MIN_CHARS || n > SB_TOKEN_MAX_CHARS)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return false;
	return true;
}

static int add(struct sb_http_tokens *t, const char *name, size_t nlen, const char *tok, size_t tlen,
	       const char *path, unsigned line, struct sb_error *err)
{
	struct sb_http_token e = {0};
	memcpy(e.name, name, nlen);
	digest(tok, tlen, e.digest);
	for (size_t i = 0; i < t->n; i++) {
		if (!strcmp(t->v[i].name, e.name))
			return sb_fail(err, "%s line %u: the client name '%s' is used twice", path, line, e.name);
		if (!memcmp(t->v[i].digest, e.digest, sizeof e.digest))
			return sb_fail(err, "%s line %u: this token is also the token of '%s'; each client needs its own",
				       path, line, t->v[i].name);
	}
	struct sb_http_token *v = realloc(t->v, (t->n + 1) * sizeof *v);
	if (!v)
		return sb_fail(err, "out of memory");
	v[t->n++] = e;
	t->v = v;
	return 0;
}

/* A secret file must not be readable or writable by others (another local
 * user would read a token, or swap in their own). */
static int check_private(int fd, const char *path, struct sb_error *err)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return sb_fail_errno(err, "cannot stat %s", path);
	if (!S_ISREG(st.st_mode))
		return sb_fail(err, "%s is not a regular file", path);
	if (st.st_mode & 077) {
		sb_fail(err, "%s can be read or written by other users (mode %03o)", path, st.st_mode & 0777);
		return sb_hint(err, "chmod 600 %s", path);
	}
	if (st.st_uid != geteuid()) {
		sb_fail(err, "%s belongs to another user (uid %u)", path, (unsigned)st.st_uid);
		return sb_hint(err, "the token file must belong to the user sagebox runs as");
	}
	return 0;
}

static int parse(const char *text, const char *path, struct sb_http_tokens *t, struct sb_error *err)
{
	unsigned line = 0;
	for (const char *p = text; *p;) {
		const char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		line++;
		while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		while (n && (*p == ' ' || *p == '\t'))
			p++, n--;
		if (n && *p != '#') {
			const char *colon = memchr(p, ':', n);
			char auto_name[32];
			const char *name = p, *tok = p;
			size_t nlen = 0, tlen = n;
			if (colon) {
				nlen = (size_t)(colon - p);
				tok = colon + 1;
				tlen = n - nlen - 1;
			} else {
				nlen = (size_t)snprintf(auto_name, sizeof auto_name, "client-%zu", t->n + 1);
				name = auto_name;
			}
			if (!name_ok(name, nlen))
				return sb_fail(err, "%s line %u: a client name is 1 to 63 letters, digits or . _ - @",
					       path, line);
			if (!token_ok(tok, tlen))
				return sb_fail(err, "%s line %u: a token is %d to %d printable characters without spaces",
					       path, line, SB_TOKEN_MIN_CHARS, SB_TOKEN_MAX_CHARS);
			if (add(t, name, nlen, tok, tlen, path, line, err) < 0)
				return -1;
		}
		if (!end)
			break;
		p = end + 1;
	}
	if (!t->n)
		return sb_fail(err, "%s holds no token (one per line: name:token, or a token)", path);
	return 0;
}

static int read_private(const char *path, struct sb_buf *b, struct sb_error *err)
{
	SB_AUTO_FD fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return sb_fail_errno(err, "cannot open the token file %s", path);
	if (check_private(fd, path, err) < 0)
		return -1;
	char chunk[4096];
	for (;;) {
		ssize_t n = sb_read_retry(fd, chunk, sizeof chunk);
		if (n < 0)
			return sb_fail_errno(err, "cannot read %s", path);
		if (n == 0)
			break;
		if (b->len + (size_t)n > 1024 * 1024)
			return sb_fail(err, "%s is over 1 MiB: not a token file", path);
		sb_buf_append(b, chunk, (size_t)n);
	}
	if (!b->data)
		sb_buf_append(b, "", 0);
	return b->data ? 0 : sb_fail(err, "out of memory");
}

int sb_http_tokens_load(const char *path, struct sb_http_tokens *t, struct sb_error *err)
{
	SB_AUTO_BUF b = {0};
	if (read_private(path, &b, err) < 0)
		return -1;
	if (parse(b.data, path, t, err) < 0) {
		sb_http_tokens_free(t);
		return -1;
	}
	return 0;
}

/* mkdir -p with mode 0700 for the parts it creates. */
static int create_token(const char *path, struct sb_error *err)
{
	uint8_t raw[32];
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		return sb_fail_errno(err, "getrandom failed");
	char hex[sizeof raw * 2 + 2];
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	strcat(hex, "\n");
	/* O_EXCL: never follow or reuse a file someone else put there first. */
	SB_AUTO_FD fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return errno == EEXIST ? 0 : sb_fail_errno(err, "cannot create the token file %s", path);
	if (sb_write_all(fd, hex, strlen(hex)) < 0 || fsync(fd) < 0) {
		unlink(path);
		return sb_fail_errno(err, "cannot write %s", path);
	}
	return 0;
}

int sb_http_tokens_default(char *path, size_t size, struct sb_http_tokens *t, struct sb_error *err)
{
	char dir[4096];
	if (sb_state_dir(dir, sizeof dir, err) < 0)
		return sb_hint(err, "give a token file with --token-file FILE");
	snprintf(path, size, "%s/token", dir);
	if (create_token(path, err) < 0)
		return -1;
	SB_AUTO_BUF b = {0};
	if (read_private(path, &b, err) < 0)
		return -1;
	size_t n = strcspn(b.data, "\r\n");
	if (!token_ok(b.data, n))
		return sb_fail(err, "%s does not hold a token", path), sb_hint(err, "remove it; a new one is made at the next start");
	return add(t, "default", strlen("default"), b.data, n, path, 1, err);
}
