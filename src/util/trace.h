#ifndef SAGEBOX_TRACE_H
#define SAGEBOX_TRACE_H

#include <stdbool.h>
#include <stdint.h>

/* Debug timing of warm calls (bench/run's breakdown). With the environment
 * variable SAGEBOX_WARM_TRACE set, the host asks the warm worker for its
 * stamps and prints lines on stderr:
 *     sagebox: trace <event> <CLOCK_MONOTONIC microseconds>
 * The worker's stamps are on the same clock (a pid namespace has none of
 * its own), so one timeline covers host and sandbox. Off, nothing is
 * printed and nothing is asked for. */
bool sb_trace_on(void);
void sb_trace_stamp(const char *event);
uint64_t sb_now_us(void);

#endif
