#include "util/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

bool sb_trace_on(void)
{
	static int on = -1; /* read once; a data race here only repeats the getenv */
	if (on < 0)
		on = getenv("SAGEBOX_WARM_TRACE") != NULL;
	return on;
}

uint64_t sb_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void sb_trace_stamp(const char *event)
{
	if (sb_trace_on())
		fprintf(stderr, "sagebox: trace %s %llu\n", event, (unsigned long long)sb_now_us());
}
