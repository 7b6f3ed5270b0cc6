/* The registry of sessions and jobs (runner/sessions.c), shared with the
 * background jobs (runner/jobs.c). Internal to src/runner/. */
#ifndef SAGEBOX_SESSREG_H
#define SAGEBOX_SESSREG_H

#include <pthread.h>
#include <stdbool.h>

#include "runner/sess.h"
#include "runner/sessions.h"

/* Ended sessions remembered, so that their ids get a precise error. */
#define SB_TOMBS 256

struct tomb {
	char id[SB_SESSION_ID_LEN];
	char owner[SB_OWNER_MAX];
	char why[300];
};

/* The ready spare sandbox of one language. */
struct spare {
	struct sb_sessions *ss;
	enum sb_lang lang;
	pthread_t maker;   /* one per language: a Sage start never delays a shell's */
	struct sess *ready;
	bool wanted;       /* the language is in use: keep one ready */
	bool making;       /* the maker is starting one */
	unsigned waiting;  /* opens waiting for it */
	struct sb_error err; /* why the last start failed */
	uint64_t failed_ms;
	unsigned failures; /* since the last success */
};

struct bjob;

struct sb_sessions {
	const struct sb_config *cfg;
	const struct sb_backend *be;
	pthread_mutex_t lock;
	pthread_cond_t changed;     /* a spare is ready or failed; stopping */
	struct sess *list;          /* sessions in use (owned, anonymous) */
	struct tomb tombs[SB_TOMBS];
	unsigned tomb_next;
	struct spare spares[3];     /* by enum sb_lang */
	struct bjob *jobs;
	bool stopping;
	pthread_t reaper;
	unsigned threads;  /* makers and reaper started */
};

/* A random id: prefix ("s_", "j_") and 32 hex digits (128 bits). */
int reg_new_id(char out[SB_SESSION_ID_LEN], const char *prefix);
/* The session id of owner's, with a reference; or -1 and err saying why
 * not (unknown, expired, closed: the same words for another client's). */
int reg_get(struct sb_sessions *ss, const char *owner, const char *id, struct sess **out, struct sb_error *err);
/* A ready session sandbox for lang (a spare, or a new one: waits), with a
 * reference, in the list: owned by owner, or anonymous. */
struct sess *reg_new_session(struct sb_sessions *ss, const char *owner, enum sb_lang lang, bool anonymous,
			     bool *from_spare, struct sb_error *err);
/* Drop a reference; the last one destroys it. */
void reg_put(struct sb_sessions *ss, struct sess *s);
/* End s on purpose: out of the list, remembered with why, killed, and the
 * list's reference dropped. */
void reg_close(struct sb_sessions *ss, struct sess *s, const char *why);

/* jobs.c: for the registry. */
void jobs_session_ids(struct sb_sessions *ss, const char *session_id, json_t *into);
bool jobs_running_in(struct sb_sessions *ss, const struct sess *s);
unsigned jobs_running_of(struct sb_sessions *ss, const char *owner);
void jobs_prune_locked(struct sb_sessions *ss, uint64_t now);
void jobs_stop_all(struct sb_sessions *ss);

#endif
