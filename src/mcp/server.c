/* The server: what every client shares. */
#include "mcp/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "util/clock.h"

/* One owner's share of the job slots: what it holds and how many of its
 * calls wait for one. Listed only while either is non-zero. */
struct sb_slot_user {
	char owner[64];
	unsigned running, waiting;
	struct sb_slot_user *next;
};

#include "mcp/tasks.h"

struct sb_mcp_server *sb_mcp_server_new(const struct sb_config *cfg, struct sb_runner *runner,
					const struct sb_error *runner_err, struct sb_audit *audit)
{
	struct sb_mcp_server *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->tools.cfg = cfg;
	s->tools.runner = runner;
	if (runner_err)
		s->tools.runner_err = *runner_err;
	s->audit = audit;
	s->max_running = cfg->max_concurrent ? cfg->max_concurrent : 1;
	s->clients = 1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->freed, NULL);
	if (!(s->tasks = sb_tasks_new(&s->tools, audit))) {
		sb_mcp_server_free(s);
		return NULL;
	}
	return s;
}

void sb_mcp_server_free(struct sb_mcp_server *s)
{
	if (!s)
		return;
	sb_tasks_free(s->tasks);
	while (s->users) {
		struct sb_slot_user *u = s->users;
		s->users = u->next;
		free(u);
	}
	pthread_cond_destroy(&s->freed);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void sb_mcp_server_drain(struct sb_mcp_server *s)
{
	atomic_store(&s->draining, true);
}

void sb_mcp_server_set_clients(struct sb_mcp_server *s, unsigned n)
{
	pthread_mutex_lock(&s->lock);
	s->clients = n ? n : 1;
	pthread_mutex_unlock(&s->lock);
}

static struct sb_slot_user *user_get(struct sb_mcp_server *s, const char *owner)
{
	for (struct sb_slot_user *u = s->users; u; u = u->next)
		if (!strcmp(u->owner, owner))
			return u;
	struct sb_slot_user *u = calloc(1, sizeof *u);
	if (!u)
		return NULL;
	snprintf(u->owner, sizeof u->owner, "%s", owner);
	u->next = s->users;
	s->users = u;
	return u;
}

static void user_put(struct sb_mcp_server *s, struct sb_slot_user *u)
{
	if (u->running || u->waiting)
		return;
	for (struct sb_slot_user **pp = &s->users; *pp; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			break;
		}
	free(u);
}

/* May u take a free slot now? Fair share between owners: one owner's long
 * calls must not keep another's short one waiting (four 15 s
 * calls of one client held every slot, and another client's print waited
 * 13 s). So with several owners none may hold the last slot while holding
 * another (a newcomer always finds one), and when slots are contended the
 * owner holding the fewest goes first. */
static bool slot_ok(const struct sb_mcp_server *s, const struct sb_slot_user *u)
{
	if (s->running >= s->max_running)
		return false;
	if (s->clients > 1 && u->running > 0 && u->running + 1 >= s->max_running)
		return false;
	for (const struct sb_slot_user *o = s->users; o; o = o->next)
		if (o != u && o->waiting && o->running < u->running)
			return false;
	return true;
}

bool sb_mcp_slot_take(struct sb_mcp_server *s, const char *owner, const atomic_bool *cancelled)
{
	pthread_mutex_lock(&s->lock);
	struct sb_slot_user *u = user_get(s, owner);
	if (!u) {
		pthread_mutex_unlock(&s->lock);
		return false;
	}
	uint64_t t0 = sb_now_ms();
	u->waiting++;
	sb_metric_set(SB_M_QUEUE_LENGTH, ++s->waiting, NULL);
	while (!atomic_load(cancelled) && !slot_ok(s, u))
		pthread_cond_wait(&s->freed, &s->lock);
	u->waiting--;
	sb_metric_set(SB_M_QUEUE_LENGTH, --s->waiting, NULL);
	sb_metric_observe(SB_M_QUEUE_WAIT_SECONDS, (double)(sb_now_ms() - t0) / 1000.0, NULL);
	bool go = !atomic_load(cancelled);
	if (go) {
		s->running++;
		u->running++;
	}
	user_put(s, u);
	if (!go) /* one waiter less: another may now be first */
		pthread_cond_broadcast(&s->freed);
	pthread_mutex_unlock(&s->lock);
	return go;
}

void sb_mcp_slot_give(struct sb_mcp_server *s, const char *owner)
{
	pthread_mutex_lock(&s->lock);
	s->running--;
	for (struct sb_slot_user *u = s->users; u; u = u->next)
		if (!strcmp(u->owner, owner)) {
			u->running--;
			user_put(s, u);
			break;
		}
	pthread_cond_broadcast(&s->freed);
	pthread_mutex_unlock(&s->lock);
}

void sb_mcp_slot_wake(struct sb_mcp_server *s)
{
	/* Under the lock: a waiter that saw *cancelled still false is already
	 * inside pthread_cond_wait when the broadcast comes. */
	pthread_mutex_lock(&s->lock);
	pthread_cond_broadcast(&s->freed);
	pthread_mutex_unlock(&s->lock);
}
