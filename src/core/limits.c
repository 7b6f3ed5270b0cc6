#include "core/limits.h"

#include <stdio.h>
#include <string.h>

const char *const sb_memory_values[] = {"256m", "512m", "1g", "2g", "4g", "8g", NULL};

int sb_memory_parse(const char *s, uint64_t *bytes)
{
	static const uint64_t sizes[] = {256ull << 20, 512ull << 20, 1ull << 30,
					 2ull << 30,   4ull << 30,   8ull << 30};
	for (size_t i = 0; sb_memory_values[i]; i++) {
		if (strcmp(s, sb_memory_values[i]) == 0) {
			if (bytes)
				*bytes = sizes[i];
			return 0;
		}
	}
	return -1;
}

void sb_limits_default(struct sb_limits *l)
{
	memset(l, 0, sizeof *l);
	l->timeout_s = SB_TIMEOUT_DEFAULT_S;
	snprintf(l->memory, sizeof l->memory, "256m");
	l->memory_bytes = 256ull << 20;
	l->cpus = SB_CPUS_DEFAULT;
	l->pids = SB_PIDS_DEFAULT;
	l->nofile = SB_NOFILE;
	l->fsize_bytes = SB_FSIZE_BYTES;
	l->tmpfs_bytes = SB_TMPFS_BYTES;
	l->output_bytes = (size_t)SB_OUTPUT_KIB_DEFAULT * 1024;
}
