/* A minimal test harness: CHECK records a failure and goes on. */
#ifndef SAGEBOX_CHECK_H
#define SAGEBOX_CHECK_H

#include <stdio.h>
#include <string.h>

static int checks_passed, checks_failed;

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (cond) {                                                           \
			checks_passed++;                                              \
		} else {                                                              \
			checks_failed++;                                              \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                     \
	} while (0)

#define CHECK_STR_CONTAINS(hay, needle) CHECK((hay) && strstr((hay), (needle)) != NULL)

static inline int check_summary(void)
{
	printf("%d passed, %d failed\n", checks_passed, checks_failed);
	return checks_failed ? 1 : 0;
}

#endif
