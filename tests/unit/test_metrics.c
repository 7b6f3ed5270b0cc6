/* The metrics (metrics/metrics.h) in Prometheus' text format: counters,
 * gauges, a histogram's cumulative buckets, label values escaped, and the
 * cap on series (beyond it, "other"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "metrics/metrics.h"

static int collected;
static void collector(void *ctx)
{
	collected++;
	sb_metric_set(SB_M_QUEUE_LENGTH, *(int *)ctx, NULL);
}

int main(void)
{
	sb_metric_add(SB_M_TOOL_CALLS, 1, (const char *[]){"run_sagemath", "ok", "native"});
	sb_metric_add(SB_M_TOOL_CALLS, 2, (const char *[]){"run_sagemath", "ok", "native"});
	sb_metric_add(SB_M_TOOL_CALLS, 1, (const char *[]){"run_python", "error", "native"});
	sb_metric_observe(SB_M_TOOL_CALL_SECONDS, 0.004, (const char *[]){"run_sagemath"});
	sb_metric_observe(SB_M_TOOL_CALL_SECONDS, 0.02, (const char *[]){"run_sagemath"});
	sb_metric_observe(SB_M_TOOL_CALL_SECONDS, 9999, (const char *[]){"run_sagemath"});
	sb_metric_set(SB_M_INFO, 1, (const char *[]){"a\"b\\c\nd"});
	int queue = 3;
	sb_metrics_collector_add(collector, &queue);
	char *t = sb_metrics_render();
	CHECK(collected == 1);
	CHECK_STR_CONTAINS(t, "# HELP sagebox_tool_calls_total ");
	CHECK_STR_CONTAINS(t, "# TYPE sagebox_tool_calls_total counter\n");
	CHECK_STR_CONTAINS(t, "\nsagebox_tool_calls_total{tool=\"run_sagemath\",outcome=\"ok\",backend=\"native\"} 3\n");
	CHECK_STR_CONTAINS(t, "\nsagebox_tool_calls_total{tool=\"run_python\",outcome=\"error\",backend=\"native\"} 1\n");
	CHECK_STR_CONTAINS(t, "# TYPE sagebox_tool_call_duration_seconds histogram\n");
	CHECK_STR_CONTAINS(t, "sagebox_tool_call_duration_seconds_bucket{tool=\"run_sagemath\",le=\"0.001\"} 0\n");
	CHECK_STR_CONTAINS(t, "sagebox_tool_call_duration_seconds_bucket{tool=\"run_sagemath\",le=\"0.005\"} 1\n");
	CHECK_STR_CONTAINS(t, "sagebox_tool_call_duration_seconds_bucket{tool=\"run_sagemath\",le=\"0.025\"} 2\n");
	CHECK_STR_CONTAINS(t, "sagebox_tool_call_duration_seconds_bucket{tool=\"run_sagemath\",le=\"600\"} 2\n");
	CHECK_STR_CONTAINS(t, "sagebox_tool_call_duration_seconds_bucket{tool=\"run_sagemath\",le=\"+Inf\"} 3\n");
	CHECK_STR_CONTAINS(t, "sagebox_tool_call_duration_seconds_count{tool=\"run_sagemath\"} 3\n");
	CHECK_STR_CONTAINS(t, "sagebox_tool_call_duration_seconds_sum{tool=\"run_sagemath\"} 9999.024\n");
	CHECK_STR_CONTAINS(t, "sagebox_instance_info{name=\"a\\\"b\\\\c\\nd\"} 1\n");
	CHECK_STR_CONTAINS(t, "\nsagebox_job_queue_length 3\n");
	free(t);
	/* A gauge a collector sets anew; cleared series go. */
	queue = 0;
	sb_metric_clear(SB_M_INFO);
	t = sb_metrics_render();
	CHECK_STR_CONTAINS(t, "\nsagebox_job_queue_length 0\n");
	CHECK(!strstr(t, "sagebox_instance_info{"));
	free(t);
	sb_metrics_collector_remove(collector, &queue);
	/* Never more than SB_METRIC_SERIES_MAX series: the rest is "other". */
	for (int i = 0; i < SB_METRIC_SERIES_MAX + 50; i++) {
		char name[32];
		snprintf(name, sizeof name, "w%d", i);
		sb_metric_add(SB_M_WORKER_REPLACEMENTS, 1, (const char *[]){name});
	}
	t = sb_metrics_render();
	CHECK(collected == 2);
	CHECK_STR_CONTAINS(t, "sagebox_warm_worker_replacements_total{reason=\"other\"} 51\n");
	size_t n = 0;
	for (const char *p = t; (p = strstr(p, "\nsagebox_warm_worker_replacements_total{")); p++)
		n++;
	CHECK(n == SB_METRIC_SERIES_MAX);
	free(t);
	sb_metrics_reset();
	t = sb_metrics_render();
	CHECK(!strstr(t, "sagebox_tool_calls_total{"));
	free(t);
	return check_summary();
}
