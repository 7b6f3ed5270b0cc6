/* The audit log: one JSON line per tools/call, appended to a file the user
 * names (audit_log setting), so a person can see what the model ran. The
 * code itself is not stored, only its SHA-256 and size. */
#ifndef SAGEBOX_MCP_AUDIT_H
#define SAGEBOX_MCP_AUDIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct sb_audit {
	int fd;
	pthread_mutex_t lock;
};

struct sb_audit_record {
	const char *tool;
	const char *code;     /* NULL for tools without code */
	size_t code_len;      /* bytes */
	size_t code_chars;    /* code points */
	unsigned timeout_s;   /* 0 for tools without code */
	char backend[64];
	char verdict[512];
	uint64_t duration_ms;
	bool ok;
};

/* Open (create, mode 0600) for appending. */
int sb_audit_open(struct sb_audit *a, const char *path, struct sb_error *err);
/* Append one line; failures go to stderr, never stop the call. Thread-safe. */
void sb_audit_write(struct sb_audit *a, const struct sb_audit_record *r);
void sb_audit_close(struct sb_audit *a);

#endif
