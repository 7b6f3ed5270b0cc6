/* The server's shared state (not a public header: others use mcp.h). */
#ifndef SAGEBOX_MCP_SERVER_H
#define SAGEBOX_MCP_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "mcp/audit.h"
#include "mcp/mcp.h"
#include "tools/tool.h"

struct sb_mcp_server {
	struct sb_tool_server tools;  /* settings, runner: what handlers see */
	struct sb_audit *audit;       /* NULL: no audit log */
	struct sb_tasks *tasks;       /* MCP tasks (mcp/tasks.h): they outlive clients */

	/* Job slots: at most max_concurrent calls that run code, over all
	 * clients, shared fairly (server.c: slot_ok). */
	pthread_mutex_t lock;
	pthread_cond_t freed;         /* a slot was given back, or a waiter was cancelled */
	unsigned running, max_running;
	unsigned waiting;             /* calls waiting for a slot (the job queue) */
	unsigned clients;             /* how many owners may call (HTTP: its tokens); 1 by default */
	struct sb_slot_user *users;   /* owners that hold or wait for a slot */
	atomic_bool draining;         /* sb_mcp_server_drain: tools that open work refuse */
};

/* Wait for a job slot for owner. Returns false, without a slot, as soon as
 * *cancelled is set (the canceller calls sb_mcp_slot_wake after setting it). */
bool sb_mcp_slot_take(struct sb_mcp_server *s, const char *owner, const atomic_bool *cancelled);
void sb_mcp_slot_give(struct sb_mcp_server *s, const char *owner);
void sb_mcp_slot_wake(struct sb_mcp_server *s);

#endif
