/* A session's interacts (core/interact.h), host side: the declarations of
 * those its calls displayed, by id, so that a viewer's values for one are
 * checked against what it declared before anything runs in the session.
 * The record is the host's own (the declarations were checked when their
 * display items came); the session's driver keeps the functions and the
 * same number of them, the oldest forgotten first, and checks again. */
#include <stdio.h>
#include <string.h>

#include "core/interact.h"
#include "runner/sessions/sess.h"

/* As the driver (interact.py MAX_KEPT): the interacts a session keeps. */
#define KEPT 64

int sess_interact_refused(struct sess *s, const struct sb_job *job, struct sb_error *err)
{
	if (s->lang == SB_LANG_SHELL) {
		sb_fail(err, "session %s is a shell session: it has no interacts", s->id);
		sb_hint(err, "an interact is made by @interact in a Sage or Python session");
		return -1;
	}
	pthread_mutex_lock(&s->lock);
	json_t *decl = json_incref(json_object_get(s->interacts, job->interact));
	pthread_mutex_unlock(&s->lock);
	if (!decl) {
		sb_fail(err, "session %s has no interact %s; nothing was run", s->id, job->interact);
		sb_hint(err, "an interact lives in the session whose call made it, until the session is reset or its "
			     "interpreter restarts (it keeps its last %d); run the cell that made it again",
			KEPT);
		return -1;
	}
	char msg[600];
	json_t *values = json_loadb(job->code, job->code_len, JSON_ALLOW_NUL, NULL);
	int rc = sb_interact_check_values(decl, values, msg, sizeof msg);
	json_decref(values);
	json_decref(decl);
	if (rc) {
		sb_fail(err, "%s; nothing was run", msg);
		sb_hint(err, "send only values the interact's controls declare (its display item lists them)");
	}
	return rc;
}

void sess_interacts_keep(struct sess *s, const struct sb_result *res, bool restarted)
{
	json_t *decls = sb_result_interacts(res);
	pthread_mutex_lock(&s->lock);
	if (restarted || !s->interacts) {
		json_decref(s->interacts);
		s->interacts = json_object();
	}
	size_t i;
	json_t *d;
	json_array_foreach(decls, i, d)
		json_object_set(s->interacts, json_string_value(json_object_get(d, "id")), d);
	/* (an object keeps its keys in the order they were added) */
	while (json_object_size(s->interacts) > KEPT)
		json_object_del(s->interacts, json_object_iter_key(json_object_iter(s->interacts)));
	pthread_mutex_unlock(&s->lock);
	json_decref(decls);
}

void sess_interacts_forget(struct sess *s)
{
	pthread_mutex_lock(&s->lock);
	json_decref(s->interacts);
	s->interacts = NULL;
	pthread_mutex_unlock(&s->lock);
}
