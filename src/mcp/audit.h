/* The audit log: JSON lines appended to a file the user names (audit_log
 * setting), so a person can see what the model ran. Each tools/call writes
 * a "started" line before its handler runs (so code that ran is on record
 * even if the server is killed before it finishes) and a "finished" line
 * with the verdict, linked by a call id. The code itself is not stored,
 * only its SHA-256 and size. */
#ifndef SAGEBOX_MCP_AUDIT_H
#define SAGEBOX_MCP_AUDIT_H

#include <pthread.h>

#include "tools/tool.h"
#include "util/error.h"

struct sb_audit {
	int fd;
	pthread_mutex_t lock;
};

/* Open (create, mode 0600) for appending. */
int sb_audit_open(struct sb_audit *a, const char *path, struct sb_error *err);
void sb_audit_close(struct sb_audit *a);

/* A fresh call id: 16 random hex digits, unique across servers sharing a log. */
void sb_audit_call_id(char id[17]);
/* SHA-256 of data as 64 lowercase hex digits. */
void sb_audit_sha256_hex(const void *data, size_t len, char hex[65]);

/* Append one line; failures go to stderr, never stop the call. Thread-safe.
 * started fills r->code_sha256, which finished reuses. */
void sb_audit_started(struct sb_audit *a, struct sb_audit_record *r);
void sb_audit_finished(struct sb_audit *a, const struct sb_audit_record *r);

#endif
