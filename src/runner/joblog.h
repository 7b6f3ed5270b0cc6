/* A background job's output: the supervisor's sink that keeps what the job
 * wrote (both streams, interleaved as a terminal shows them) in one log
 * that a model pages through by byte offsets (job_output). The log keeps
 * the last SB_JOBLOG_KEEP bytes; offsets keep counting from the job's first
 * byte, and a page asked for below what is kept says how much was dropped.
 * Written by the job's thread, read by any (under its own lock). */
#ifndef SAGEBOX_JOBLOG_H
#define SAGEBOX_JOBLOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runner/supervise.h"

#define SB_JOBLOG_KEEP (8u << 20)
/* A job writing this much to one stream is stopped (output_limit_exceeded). */
#define SB_JOBLOG_FLOOD (1ull << 30)

struct sb_joblog {
	struct sb_sink sink;     /* first: the supervisor's view */
	pthread_mutex_t lock;
	char *data;              /* the kept bytes: offsets [base, base + len) */
	size_t len, cap;
	uint64_t base;           /* offset of data[0] */
	uint64_t total[2];       /* per stream, written in all */
};

void sb_joblog_init(struct sb_joblog *l);
void sb_joblog_free(struct sb_joblog *l);

/* A page: up to max bytes from offset, cut at a character boundary (valid
 * UTF-8, malloc'd, *len bytes). *next is where the next page starts,
 * *dropped how many bytes between offset and what is kept are gone (0
 * normally), *end the offset of the last byte written so far. */
char *sb_joblog_page(struct sb_joblog *l, uint64_t offset, size_t max, size_t *len, uint64_t *next,
		     uint64_t *dropped, uint64_t *end);
/* Bytes written in all, both streams. */
uint64_t sb_joblog_bytes(struct sb_joblog *l);
/* The last up to n bytes (valid UTF-8, malloc'd). */
char *sb_joblog_tail(struct sb_joblog *l, size_t n, size_t *len);

#endif
