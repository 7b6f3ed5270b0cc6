/* The process metrics: this server's resident memory and that of its
 * child processes (sandboxes, warm workers, sessions, the proxy), read
 * from /proc at each render. */
#ifndef SAGEBOX_METRICS_PROCESS_H
#define SAGEBOX_METRICS_PROCESS_H

/* Register the collector (idempotent). */
void sb_metrics_process_start(void);

#endif
