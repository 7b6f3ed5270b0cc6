/* Resource limits of one job. Bounds and defaults are the seed plugin's. */
#ifndef SAGEBOX_LIMITS_H
#define SAGEBOX_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#define SB_TIMEOUT_MIN_S 1
#define SB_TIMEOUT_MAX_S 600
#define SB_TIMEOUT_DEFAULT_S 30
#define SB_CPUS_MIN 0.1
#define SB_CPUS_MAX 4.0
#define SB_CPUS_DEFAULT 1.0
#define SB_PIDS_MIN 16
#define SB_PIDS_MAX 512
#define SB_PIDS_DEFAULT 96
#define SB_OUTPUT_KIB_MIN 16
#define SB_OUTPUT_KIB_MAX 2048
#define SB_OUTPUT_KIB_DEFAULT 256
#define SB_NOFILE 1024
#define SB_FSIZE_BYTES (128ull << 20)
#define SB_TMPFS_BYTES (256ull << 20)
#define SB_CODE_MAX_CHARS 50000

struct sb_limits {
	unsigned timeout_s;       /* wall clock, SB_TIMEOUT_MIN_S..SB_TIMEOUT_MAX_S */
	char memory[8];           /* "256m", "512m", "1g", "2g", "4g", "8g" */
	uint64_t memory_bytes;    /* the same, in bytes */
	double cpus;              /* SB_CPUS_MIN..SB_CPUS_MAX */
	unsigned pids;            /* SB_PIDS_MIN..SB_PIDS_MAX */
	unsigned nofile;          /* SB_NOFILE */
	uint64_t fsize_bytes;     /* SB_FSIZE_BYTES */
	uint64_t tmpfs_bytes;     /* size of the writable tmpfs (/tmp and work dir) */
	size_t output_bytes;      /* per stream, SB_OUTPUT_KIB_MIN..MAX KiB */
};

/* The allowed memory values, NULL-terminated, and their parser.
 * Returns 0 and sets *bytes for an allowed value, -1 otherwise. */
extern const char *const sb_memory_values[];
int sb_memory_parse(const char *s, uint64_t *bytes);
void sb_limits_default(struct sb_limits *l);

#endif
