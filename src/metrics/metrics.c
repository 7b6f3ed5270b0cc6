#include "metrics/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

enum type { COUNTER, GAUGE, HISTOGRAM };

/* Call latencies, from a session's sub-millisecond call to a job's minutes. */
static const double call_buckets[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
				      1, 2.5, 5, 10, 30, 60, 120, 300, 600};
#define NBUCKETS (sizeof call_buckets / sizeof *call_buckets)

/* THE table: every metric the server exports (Prometheus' naming: a unit
 * suffix, _total on counters). */
static const struct def {
	const char *name;
	enum type type;
	const char *help;
	const char *labels[SB_METRIC_LABELS_MAX]; /* NULL-terminated when fewer */
} defs[SB_M_COUNT] = {
	[SB_M_INFO] = {"sagebox_instance_info", GAUGE, "This instance, by its name (the instance setting); always 1.", {"name"}},
	[SB_M_TOOL_CALLS] = {"sagebox_tool_calls_total", COUNTER, "Tool calls answered, by tool, outcome (ok, error: the code or the sandbox failed, refused: bad arguments or limits, cancelled) and backend.", {"tool", "outcome", "backend"}},
	[SB_M_TOOL_CALL_SECONDS] = {"sagebox_tool_call_duration_seconds", HISTOGRAM, "Time from a tool call's arrival to its answer.", {"tool"}},
	[SB_M_QUEUE_LENGTH] = {"sagebox_job_queue_length", GAUGE, "Calls waiting for one of the max_concurrent job slots.", {NULL}},
	[SB_M_QUEUE_WAIT_SECONDS] = {"sagebox_job_queue_wait_seconds", HISTOGRAM, "Time a call waited for a job slot.", {NULL}},
	[SB_M_SESSIONS_OPEN] = {"sagebox_sessions_open", GAUGE, "Open sessions (session_open), by language and client (\"all\" unless token names are asked for).", {"lang", "client"}},
	[SB_M_JOBS_RUNNING] = {"sagebox_background_jobs_running", GAUGE, "Background jobs (job_start, MCP tasks) queued or running, by language and client.", {"lang", "client"}},
	[SB_M_HTTP_SESSIONS] = {"sagebox_http_sessions_open", GAUGE, "MCP sessions of the handshake era (Mcp-Session-Id) open over HTTP.", {NULL}},
	[SB_M_HTTP_IN_FLIGHT] = {"sagebox_http_requests_in_flight", GAUGE, "HTTP requests to /mcp being answered.", {NULL}},
	[SB_M_WARM_WORKERS] = {"sagebox_warm_workers", GAUGE, "Warm workers, by language and state (idle, busy, starting).", {"lang", "state"}},
	[SB_M_SPARES] = {"sagebox_session_spares", GAUGE, "Session sandboxes started ahead and ready for the next session_open, by language.", {"lang"}},
	[SB_M_WORKER_REPLACEMENTS] = {"sagebox_warm_worker_replacements_total", COUNTER, "Warm workers replaced, by reason (recycled: their job or age limit; lost: died, misbehaved or killed for a job).", {"reason"}},
	[SB_M_SANDBOX_START_FAILURES] = {"sagebox_sandbox_start_failures_total", COUNTER, "Sandboxes (workers, sessions, fresh calls) that failed to start, by backend.", {"backend"}},
	[SB_M_RESIDENT_BYTES] = {"process_resident_memory_bytes", GAUGE, "Resident memory of the sagebox server process.", {NULL}},
	[SB_M_SANDBOX_RESIDENT_BYTES] = {"sagebox_sandbox_resident_memory_bytes", GAUGE, "Resident memory of the server's child processes (sandboxes, workers, the proxy), summed per process: pages they share are counted once per process.", {NULL}},
	[SB_M_DRAINING] = {"sagebox_draining", GAUGE, "1 while the instance drains (SIGTERM or sagebox mcp --drain): no new sessions or jobs.", {NULL}},
	[SB_M_PROXY_CONNECTIONS] = {"sagebox_proxy_connections_total", COUNTER, "Connections from sandboxes to the network proxy, by outcome (allowed: relayed to a listed host; refused: not in the network allow-list, a special address, over the per-sandbox cap, or not a proxy request; failed: the host could not be looked up or reached, or the sandbox closed before its request).", {"outcome"}},
};

struct series {
	char label[SB_METRIC_LABELS_MAX][64];
	double value;               /* counter, gauge; a histogram's sum */
	uint64_t count;             /* histogram */
	uint64_t buckets[NBUCKETS]; /* histogram: observations <= each bound (not cumulative here) */
};

struct family {
	struct series *s;
	size_t n, cap;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* One render at a time (a collector clears and sets its gauges anew), and
 * a collector removed is called no more once its removal returns. */
static pthread_mutex_t rendering = PTHREAD_MUTEX_INITIALIZER;
static struct family fams[SB_M_COUNT];
static struct {
	sb_metric_collector fn;
	void *ctx;
} collectors[8];

static size_t nlabels(const struct def *d)
{
	size_t n = 0;
	while (n < SB_METRIC_LABELS_MAX && d->labels[n])
		n++;
	return n;
}

static bool same(const struct series *s, const char *const *labels, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strncmp(s->label[i], labels[i] ? labels[i] : "", sizeof s->label[i] - 1))
			return false;
	return true;
}

/* The series of these label values, made on first use (lock held). */
static struct series *series_of(enum sb_metric m, const char *const *labels)
{
	static const char *const other[SB_METRIC_LABELS_MAX] = {"other", "other", "other"};
	struct family *f = &fams[m];
	size_t n = nlabels(&defs[m]);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < f->n; i++)
			if (same(&f->s[i], labels, n))
				return &f->s[i];
		if (f->n < SB_METRIC_SERIES_MAX - 1 || pass)
			break;
		labels = other; /* full: the last series counts the rest, as "other" */
	}
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		struct series *s = realloc(f->s, cap * sizeof *s);
		if (!s)
			return NULL;
		f->s = s;
		f->cap = cap;
	}
	struct series *s = &f->s[f->n++];
	memset(s, 0, sizeof *s);
	for (size_t i = 0; i < n; i++)
		snprintf(s->label[i], sizeof s->label[i], "%s", labels[i] ? labels[i] : "");
	return s;
}

void sb_metric_add(enum sb_metric m, double v, const char *const *labels)
{
	pthread_mutex_lock(&lock);
	struct series *s = series_of(m, labels);
	if (s)
		s->value += v;
	pthread_mutex_unlock(&lock);
}

void sb_metric_set(enum sb_metric m, double v, const char *const *labels)
{
	pthread_mutex_lock(&lock);
	struct series *s = series_of(m, labels);
	if (s)
		s->value = v;
	pthread_mutex_unlock(&lock);
}

void sb_metric_observe(enum sb_metric m, double v, const char *const *labels)
{
	pthread_mutex_lock(&lock);
	struct series *s = series_of(m, labels);
	if (s) {
		s->value += v;
		s->count++;
		for (size_t b = 0; b < NBUCKETS; b++)
			if (v <= call_buckets[b]) {
				s->buckets[b]++;
				break;
			}
	}
	pthread_mutex_unlock(&lock);
}

void sb_metric_clear(enum sb_metric m)
{
	pthread_mutex_lock(&lock);
	fams[m].n = 0;
	pthread_mutex_unlock(&lock);
}

void sb_metrics_collector_add(sb_metric_collector fn, void *ctx)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < sizeof collectors / sizeof *collectors; i++)
		if (!collectors[i].fn) {
			collectors[i].fn = fn;
			collectors[i].ctx = ctx;
			break;
		}
	pthread_mutex_unlock(&lock);
}

void sb_metrics_collector_remove(sb_metric_collector fn, void *ctx)
{
	pthread_mutex_lock(&rendering);
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < sizeof collectors / sizeof *collectors; i++)
		if (collectors[i].fn == fn && collectors[i].ctx == ctx)
			collectors[i].fn = NULL;
	pthread_mutex_unlock(&lock);
	pthread_mutex_unlock(&rendering);
}

/* A label value as the text format wants it: \ " and newline escaped. */
static void put_value(struct sb_buf *b, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			sb_buf_printf(b, "\\%c", *v);
		else if (*v == '\n')
			sb_buf_printf(b, "\\n");
		else
			sb_buf_append(b, v, 1);
	}
}

/* {a="x",b="y"[,le="..."]} or nothing. */
static void put_labels(struct sb_buf *b, const struct def *d, const struct series *s, const char *le)
{
	size_t n = nlabels(d);
	if (!n && !le)
		return;
	sb_buf_printf(b, "{");
	for (size_t i = 0; i < n; i++) {
		sb_buf_printf(b, "%s%s=\"", i ? "," : "", d->labels[i]);
		put_value(b, s->label[i]);
		sb_buf_printf(b, "\"");
	}
	if (le)
		sb_buf_printf(b, "%sle=\"%s\"", n ? "," : "", le);
	sb_buf_printf(b, "}");
}

static void put_number(struct sb_buf *b, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		sb_buf_printf(b, " %.0f\n", v);
	else
		sb_buf_printf(b, " %.9g\n", v);
}

static void render_family(struct sb_buf *b, const struct def *d, const struct family *f)
{
	sb_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", d->name, d->help, d->name,
		      d->type == COUNTER ? "counter" : d->type == GAUGE ? "gauge" : "histogram");
	for (size_t i = 0; i < f->n; i++) {
		const struct series *s = &f->s[i];
		if (d->type != HISTOGRAM) {
			sb_buf_printf(b, "%s", d->name);
			put_labels(b, d, s, NULL);
			put_number(b, s->value);
			continue;
		}
		uint64_t cum = 0;
		char le[32];
		for (size_t k = 0; k < NBUCKETS; k++) {
			cum += s->buckets[k];
			snprintf(le, sizeof le, "%g", call_buckets[k]);
			sb_buf_printf(b, "%s_bucket", d->name);
			put_labels(b, d, s, le);
			put_number(b, (double)cum);
		}
		sb_buf_printf(b, "%s_bucket", d->name);
		put_labels(b, d, s, "+Inf");
		put_number(b, (double)s->count);
		sb_buf_printf(b, "%s_sum", d->name);
		put_labels(b, d, s, NULL);
		put_number(b, s->value);
		sb_buf_printf(b, "%s_count", d->name);
		put_labels(b, d, s, NULL);
		put_number(b, (double)s->count);
	}
}

char *sb_metrics_render(void)
{
	pthread_mutex_lock(&rendering);
	struct {
		sb_metric_collector fn;
		void *ctx;
	} run[sizeof collectors / sizeof *collectors];
	pthread_mutex_lock(&lock);
	memcpy(run, collectors, sizeof run);
	pthread_mutex_unlock(&lock);
	for (size_t i = 0; i < sizeof run / sizeof *run; i++)
		if (run[i].fn)
			run[i].fn(run[i].ctx);
	struct sb_buf b = {0};
	pthread_mutex_lock(&lock);
	for (int m = 0; m < SB_M_COUNT; m++)
		render_family(&b, &defs[m], &fams[m]);
	pthread_mutex_unlock(&lock);
	pthread_mutex_unlock(&rendering);
	return b.data;
}

void sb_metrics_reset(void)
{
	pthread_mutex_lock(&lock);
	for (int m = 0; m < SB_M_COUNT; m++) {
		free(fams[m].s);
		memset(&fams[m], 0, sizeof fams[m]);
	}
	memset(collectors, 0, sizeof collectors);
	pthread_mutex_unlock(&lock);
}
