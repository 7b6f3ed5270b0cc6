/* A background job's output: the supervisor's sink that keeps what the job
 * wrote (both streams, interleaved as a terminal shows them) in one log
 * that a model pages through by byte offsets (job_output). The log keeps
 * the last SB_JOBLOG_KEEP bytes; offsets keep counting from the job's first
 * byte, and a page asked for below what is kept says how much was dropped.
 *
 * The kept bytes are on disk, not in sagebox's memory: a ring of
 * SB_JOBLOG_KEEP bytes in an unnamed file (O_TMPFILE) in the state
 * directory, made at the first write and gone when the log is freed (or
 * sagebox dies). Finished jobs' logs would otherwise pin the server's own
 * memory, outside every sandbox's limit (32 jobs of 8 MiB raised
 * its RSS from 5 to 273 MiB). sb_joblog_drop lets the job table keep a
 * total across clients.
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
	int fd;                  /* the ring: offset o at o % SB_JOBLOG_KEEP; -1 before the first write */
	uint64_t base;           /* the oldest offset kept; kept: [base, total) */
	uint64_t total[2];       /* per stream, written in all */
	bool dropped;            /* sb_joblog_drop: nothing is kept any more */
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
/* Bytes no longer kept (the oldest, or all after sb_joblog_drop). */
uint64_t sb_joblog_gone(struct sb_joblog *l);
/* Bytes kept (on disk). */
uint64_t sb_joblog_kept(struct sb_joblog *l);
/* The last up to n bytes (valid UTF-8, malloc'd). */
char *sb_joblog_tail(struct sb_joblog *l, size_t n, size_t *len);
/* Forget every kept byte and close the file (a finished job's log, to keep
 * the total of all logs); later pages say the bytes were dropped. */
void sb_joblog_drop(struct sb_joblog *l);
/* true once sb_joblog_drop was called. */
bool sb_joblog_was_dropped(struct sb_joblog *l);

#endif
