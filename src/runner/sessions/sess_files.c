/* The file tools' operations: requests to the session's controller, which
 * resolves every path inside the session's own sandbox, beneath /work
 * (src/worker/driver/files.py). The host never opens a path of a
 * sandbox. */
#include <errno.h>
#include <string.h>

#include "runner/sessions/sessions.h"
#include "runner/sessions/sessreg.h"

/* One request's wait: a file operation is quick; a large read streams. */
#define FILE_TIMEOUT_MS 60000
/* A read request asks for at most this much at once (the controller sends
 * it in 64 KiB data frames). */
#define READ_STEP (1u << 20)

/* The reply's verdict: 0, or -1 with its error (ENOSPC: a full workspace). */
static int answer(json_t *reply, struct sb_error *err)
{
	if (json_is_true(json_object_get(reply, "ok")))
		return 0;
	const char *e = json_string_value(json_object_get(reply, "error"));
	sb_fail(err, "%s", e ? e : "the session refused the request");
	if (json_is_true(json_object_get(reply, "full"))) {
		err->errnum = ENOSPC;
		sb_hint(err, "the workspace holds at most workspace_size bytes: delete files you no longer need "
			     "(run_shell: rm), or ask the user to raise workspace_size");
	}
	return -1;
}

int sb_session_write(struct sb_sessions *ss, const char *owner, const char *id, const char *path, const void *data,
		     size_t n, bool append, json_t **reply, struct sb_error *err)
{
	struct sess *s;
	*reply = NULL;
	if (reg_get(&ss->reg, owner, id, &s, err))
		return -1;
	json_t *h = json_pack("{s:s, s:s, s:b, s:I}", "type", "write", "path", path, "append", append, "code_bytes",
			      (json_int_t)n);
	int rc = sess_request(s, h, data, n, FILE_TIMEOUT_MS, 0, NULL, NULL, reply, err);
	if (!rc && answer(*reply, err)) {
		json_decref(*reply);
		*reply = NULL;
		rc = -1;
	}
	reg_put(&ss->reg, s);
	return rc;
}

struct counted {
	int (*fn)(void *ctx, const char *p, size_t n);
	void *ctx;
	uint64_t got;
};

static int count_and_pass(void *ctx, const char *p, size_t n)
{
	struct counted *c = ctx;
	c->got += n;
	return c->fn(c->ctx, p, n);
}

int sb_session_read(struct sb_sessions *ss, const char *owner, const char *id, const char *path, uint64_t offset,
		    uint64_t length, int (*fn)(void *ctx, const char *p, size_t n), void *ctx, json_t **meta,
		    struct sb_error *err)
{
	struct sess *s;
	*meta = NULL;
	if (reg_get(&ss->reg, owner, id, &s, err))
		return -1;
	int rc = 0;
	/* Step by step: each request's reply comes after its data, and a file
	 * that shrinks under us ends the loop (a short step). */
	for (uint64_t done = 0; !rc && (done == 0 || done < length);) {
		uint64_t step = length - done < READ_STEP ? length - done : READ_STEP;
		struct counted c = {fn, ctx, 0};
		json_t *h = json_pack("{s:s, s:s, s:I, s:I}", "type", "read", "path", path, "offset",
				      (json_int_t)(offset + done), "length", (json_int_t)step);
		json_t *reply = NULL;
		rc = sess_request(s, h, NULL, 0, FILE_TIMEOUT_MS, 0, count_and_pass, &c, &reply, err);
		if (!rc)
			rc = answer(reply, err);
		if (!rc) {
			json_decref(*meta);
			*meta = json_incref(reply);
		}
		json_decref(reply);
		done += c.got;
		if (c.got < step || !step) /* (length 0: only the meta) */
			break;
	}
	if (rc) {
		json_decref(*meta);
		*meta = NULL;
	}
	reg_put(&ss->reg, s);
	return rc;
}

int sb_session_files(struct sb_sessions *ss, const char *owner, const char *id, const char *path, json_t **reply,
		     struct sb_error *err)
{
	struct sess *s;
	*reply = NULL;
	if (reg_get(&ss->reg, owner, id, &s, err))
		return -1;
	json_t *h = json_pack("{s:s, s:s?}", "type", "list", "path", path);
	int rc = sess_request(s, h, NULL, 0, FILE_TIMEOUT_MS, 0, NULL, NULL, reply, err);
	if (!rc && answer(*reply, err)) {
		json_decref(*reply);
		*reply = NULL;
		rc = -1;
	}
	reg_put(&ss->reg, s);
	return rc;
}
