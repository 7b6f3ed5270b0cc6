/* The server's metrics, for Prometheus: one table of every metric (name,
 * type, help, label names), counters, gauges and histograms kept in this
 * process, and their text exposition format (GET /metrics,
 * transport/http_ops.h).
 *
 * Label values come from bounded sets only (tool names from the tool
 * table, outcomes and reasons from fixed lists, backends from the
 * registry, a language): never a handle or a token's name (unless the
 * operator asked for token names, transport/http_options.h). A metric
 * keeps at most SB_METRIC_SERIES_MAX series; beyond that, values are
 * counted under labels "other", so a bug can never grow memory without
 * bound. Thread-safe; below every layer that counts (no includes of
 * theirs). */
#ifndef SAGEBOX_METRICS_H
#define SAGEBOX_METRICS_H

#include <stdbool.h>

#define SB_METRIC_LABELS_MAX 3
#define SB_METRIC_SERIES_MAX 256

enum sb_metric {
	SB_M_INFO,                  /* gauge {name}: 1 */
	SB_M_TOOL_CALLS,            /* counter {tool, outcome, backend} */
	SB_M_TOOL_CALL_SECONDS,     /* histogram {tool} */
	SB_M_QUEUE_LENGTH,          /* gauge: calls waiting for a job slot */
	SB_M_QUEUE_WAIT_SECONDS,    /* histogram: a call's wait for a job slot */
	SB_M_SESSIONS_OPEN,         /* gauge {lang, client} */
	SB_M_JOBS_RUNNING,          /* gauge {lang, client}: background jobs and tasks */
	SB_M_HTTP_SESSIONS,         /* gauge: MCP sessions of the handshake era */
	SB_M_HTTP_IN_FLIGHT,        /* gauge: HTTP requests being answered */
	SB_M_WARM_WORKERS,          /* gauge {lang, state} */
	SB_M_SPARES,                /* gauge {lang}: ready session sandboxes */
	SB_M_WORKER_REPLACEMENTS,   /* counter {reason} */
	SB_M_SANDBOX_START_FAILURES, /* counter {backend} */
	SB_M_RESIDENT_BYTES,        /* gauge: this process's resident memory */
	SB_M_SANDBOX_RESIDENT_BYTES, /* gauge: its sandboxes' processes' resident memory, summed */
	SB_M_DRAINING,              /* gauge: 1 while draining */
	SB_M_PROXY_CONNECTIONS,     /* counter {outcome}: the network proxy's connections */
	SB_M_COUNT
};

/* labels: as many values as the metric has label names (NULL for none). */
void sb_metric_add(enum sb_metric m, double v, const char *const *labels);
void sb_metric_set(enum sb_metric m, double v, const char *const *labels);
/* A histogram's observation (seconds). */
void sb_metric_observe(enum sb_metric m, double v, const char *const *labels);
/* Forget every series of a gauge (a collector that sets them all anew). */
void sb_metric_clear(enum sb_metric m);

/* A function that sets gauges from the state of the moment, called at
 * each render (outside the metrics' lock). At most 8. Once remove returns,
 * fn is not called again (a render under way finishes first). */
typedef void (*sb_metric_collector)(void *ctx);
void sb_metrics_collector_add(sb_metric_collector fn, void *ctx);
void sb_metrics_collector_remove(sb_metric_collector fn, void *ctx);

/* Every metric in Prometheus' text format 0.0.4 (malloc'd), or NULL. */
char *sb_metrics_render(void);

/* Forget everything (tests). */
void sb_metrics_reset(void);

#endif
