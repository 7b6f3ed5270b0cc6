#ifndef SAGEBOX_CLOCK_H
#define SAGEBOX_CLOCK_H

#include <stdint.h>

/* Milliseconds on the monotonic clock. */
uint64_t sb_now_ms(void);

#endif
