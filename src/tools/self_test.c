/* The self-test: the seed's job (factor x^4 - 1 as Sage) in the same kind
 * of sandbox run_sagemath uses, then a probe that checks the sandbox from
 * inside (self_test_probe.py). Works for every backend: where a backend does
 * not isolate, its checks fail and say so. */
#include "tools/self_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "core/result.h"

extern const char sb_self_test_probe_py[];

#define FACTOR_CODE "R.<x> = QQ[]\nprint(factor(x^4 - 1))\n"
#define FACTOR_EXPECTED "(x - 1) * (x + 1) * (x^2 + 1)"
/* The probe's memory check allocates past this limit: always the smallest
 * allowed value, so the check stays fast whatever the configuration. */
#define PROBE_MEMORY "256m"

static void add_check(json_t *checks, const char *name, bool ok, const char *detail)
{
	json_array_append_new(checks, json_pack("{s:s, s:b, s:s}", "name", name, "ok", ok, "detail", detail));
}

static bool run_job(struct sb_runner *r, enum sb_lang lang, const char *code, const struct sb_limits *l,
		    struct sb_result *res)
{
	struct sb_job job = {.kind = SB_JOB_STATELESS, .lang = lang, .code = code, .code_len = strlen(code), .limits = *l};
	struct sb_run_out ro;
	int rc = sb_runner_run(r, &job, NULL, &ro);
	*res = ro.res; /* (the caller frees it) */
	return rc == 0;
}

static char *trimmed(const char *s)
{
	if (!s)
		return strdup("");
	while (*s == ' ' || *s == '\n')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r'))
		n--;
	return strndup(s, n);
}

/* Run the probe with the backend's claims prepended; append its checks. */
static void probe(struct sb_runner *r, const json_t *claimed, json_t *checks)
{
	struct sb_limits l = sb_runner_config(r)->limits;
	snprintf(l.memory, sizeof l.memory, PROBE_MEMORY);
	sb_memory_parse(PROBE_MEMORY, &l.memory_bytes);
	if (l.timeout_s < 30)
		l.timeout_s = 30;
	char *expect = json_dumps(claimed ? claimed : json_object(), JSON_COMPACT | JSON_ENSURE_ASCII);
	/* The caller's home directory: the probe checks it is not visible. */
	const char *home = getenv("HOME");
	json_t *hj = json_pack("{s:s}", "home", home ? home : "");
	/* network set: a listed host:port the probe asks the proxy for (the
	 * first entry; a subdomain for *.DOMAIN), for an allowed connection
	 * beside a refused one. */
	const struct sb_netlist *nl = &sb_runner_config(r)->net;
	if (hj && nl->n) {
		const struct sb_net_entry *e = &nl->e[0];
		char target[SB_NET_HOST_MAX + 32];
		snprintf(target, sizeof target, "%s%s%s%s:%u", e->wildcard ? "sagebox-self-test." : "",
			 e->ip && strchr(e->host, ':') ? "[" : "", e->host, e->ip && strchr(e->host, ':') ? "]" : "",
			 e->port ? e->port : 443);
		json_object_set_new(hj, "network", json_pack("{s:i, s:s}", "port", SB_NET_PORT, "allowed", target));
	}
	char *host = hj ? json_dumps(hj, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	json_decref(hj);
	size_t n = strlen(sb_self_test_probe_py) + (expect ? strlen(expect) : 2) + (host ? strlen(host) : 2) + 160;
	char *code = malloc(n);
	if (!code) {
		free(expect);
		add_check(checks, "probe ran", false, "out of memory");
		return;
	}
	/* json.loads of an ASCII JSON text in a raw triple-quoted string. */
	snprintf(code, n, "import json\nEXPECT = json.loads(r'''%s''')\nHOST = json.loads(r'''%s''')\nMEMORY_BYTES = %llu\n%s",
		 expect ? expect : "{}", host ? host : "{}", (unsigned long long)l.memory_bytes, sb_self_test_probe_py);
	free(expect);
	free(host);
	struct sb_result res;
	bool ran = run_job(r, SB_LANG_PYTHON, code, &l, &res);
	free(code);
	json_t *list = NULL;
	if (ran && !res.internal_error && res.out.data) {
		/* The verdict is the line of stdout that starts with '['. */
		json_error_t je;
		const char *line = strstr(res.out.data, "\n[");
		const char *start = res.out.data[0] == '[' ? res.out.data : line ? line + 1 : NULL;
		if (start)
			list = json_loads(start, JSON_DISABLE_EOF_CHECK, &je);
	}
	if (json_is_array(list)) {
		size_t i;
		json_t *c;
		json_array_foreach(list, i, c) json_array_append(checks, c);
	} else {
		char detail[1024];
		snprintf(detail, sizeof detail, "the probe printed no verdict: %s%s",
			 res.internal_error ? res.internal_error : "",
			 res.err.data ? res.err.data + (res.err.len > 600 ? res.err.len - 600 : 0) : "");
		add_check(checks, "probe ran", false, detail);
	}
	json_decref(list);
	sb_result_free(&res);
}

json_t *sb_self_test(struct sb_runner *r)
{
	const struct sb_config *cfg = sb_runner_config(r);
	json_t *o = json_object();
	json_t *checks = json_array();
	json_object_set_new(o, "backend", json_string(cfg->backend));

	struct sb_result res;
	bool ran = run_job(r, SB_LANG_SAGE, FACTOR_CODE, &cfg->limits, &res);
	json_t *factor = ran ? sb_result_to_json(&res) : json_object();
	json_object_set_new(o, "factor", factor);
	char *got = trimmed(res.out.data);
	bool factor_ok = ran && !res.internal_error && strcmp(got, FACTOR_EXPECTED) == 0;
	char detail[512];
	if (res.internal_error) {
		snprintf(detail, sizeof detail, "the sandbox could not start: %s", res.internal_error);
		json_object_set_new(o, "error", json_string(res.internal_error));
		if (res.hint)
			json_object_set_new(o, "hint", json_string(res.hint));
	} else {
		snprintf(detail, sizeof detail, "printed \"%.200s\" (expected \"%s\")", got, FACTOR_EXPECTED);
	}
	free(got);
	add_check(checks, "sage factor(x^4 - 1)", factor_ok, detail);
	json_t *claimed = res.sandbox ? json_incref(res.sandbox) : NULL;
	if (claimed) {
		const char *be = json_string_value(json_object_get(claimed, "backend"));
		if (be)
			json_object_set_new(o, "backend", json_string(be));
	}
	bool started = !res.internal_error;
	sb_result_free(&res);

	if (started)
		probe(r, claimed, checks);
	json_decref(claimed);

	bool ok = true;
	size_t i;
	json_t *c;
	/* A check that does not apply to this backend (ok: null) does not fail. */
	json_array_foreach(checks, i, c) {
		json_t *v = json_object_get(c, "ok");
		ok = ok && (json_is_true(v) || json_is_null(v));
	}
	json_object_set_new(o, "ok", json_boolean(ok));
	json_object_set_new(o, "checks", checks);
	return o;
}
