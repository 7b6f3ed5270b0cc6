/* The server: what every client shares. */
#include "mcp/server.h"

#include <stdlib.h>

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
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->freed, NULL);
	if (!(s->tasks = sb_tasks_new(s))) {
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
	pthread_cond_destroy(&s->freed);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

bool sb_mcp_slot_take(struct sb_mcp_server *s, const atomic_bool *cancelled)
{
	pthread_mutex_lock(&s->lock);
	while (!atomic_load(cancelled) && s->running >= s->max_running)
		pthread_cond_wait(&s->freed, &s->lock);
	bool go = !atomic_load(cancelled);
	if (go)
		s->running++;
	pthread_mutex_unlock(&s->lock);
	return go;
}

void sb_mcp_slot_give(struct sb_mcp_server *s)
{
	pthread_mutex_lock(&s->lock);
	s->running--;
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
