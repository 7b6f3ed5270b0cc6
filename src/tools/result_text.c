#include "tools/result_text.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "config/netlist.h"
#include "core/display_out.h"

static void put_stream(FILE *f, const struct sb_stream *s)
{
	/* NUL bytes would end the text for many clients: show them as \0. */
	const char *p = s->data, *end = s->data + s->len;
	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t n = nul ? (size_t)(nul - p) : (size_t)(end - p);
		fwrite(p, 1, n, f);
		if (!nul)
			break;
		fputs("\\0", f);
		p = nul + 1;
	}
	if (s->data[s->len - 1] != '\n')
		fputc('\n', f);
}

static void truncation(FILE *f, const char *name, const struct sb_stream *s, const struct sb_result *r)
{
	if (!s->truncated)
		return;
	fprintf(f,
		"[%s was cut: the code wrote %llu bytes, more than the %zu KiB kept per stream; the middle "
		"is left out]\n",
		name, (unsigned long long)s->total_bytes, r->max_bytes_per_stream / 1024);
}

static void advice(FILE *f, const struct sb_result *r, const struct sb_tool *t, const struct sb_config *cfg)
{
	if (r->out_of_memory) {
		/* The sandbox died at its memory limit: the code's doing, not
		 * the sandbox failing. */
		fprintf(f, "The code ran out of memory: it needed more than the memory limit (%s). Make the "
			   "computation smaller or use less memory; files in /tmp and /dev/shm count against the "
			   "limit, so delete the ones you do not need.\n", cfg->limits.memory);
	} else if (r->internal_error) {
		fprintf(f,
			"The sandbox could not run the code; this is not a problem with your code.%s%s\n"
			"Call sandbox_status to see what is missing, and tell the user.\n",
			r->hint ? " Hint: " : "", r->hint ? r->hint : "");
	} else if (r->timed_out) {
		if (r->timeout_s < SB_TIMEOUT_MAX_S)
			fprintf(f,
				"The code did not finish in %u s. Make the computation smaller or faster, or call "
				"%s again with a larger timeout_seconds (at most %d).\n",
				r->timeout_s, t->name, SB_TIMEOUT_MAX_S);
		else
			fprintf(f, "The code did not finish in %u s, the longest allowed. Make the computation "
				   "smaller or faster.\n", r->timeout_s);
	} else if (r->output_limit_exceeded) {
		fprintf(f,
			"The output was larger than %zu KiB per stream, so the sandbox was stopped. Print less: "
			"sizes, summaries or the first few items.\n",
			r->max_bytes_per_stream / 1024);
	} else if (r->signal == SIGKILL) {
		fprintf(f, "The process was killed, most often because it needed more than the memory limit "
			   "(%s). Use less memory.\n", cfg->limits.memory);
	} else if (r->signal) {
		fprintf(f, "The process was killed by a signal; fix the code and call %s again.\n", t->name);
	} else if (r->exit_code != 0) {
		fprintf(f, "The code failed: read the error above, fix the code and call %s again.\n", t->name);
	}
}

/* What the network proxy refused while the code ran (as the proxy told the
 * runner, never guessed from the output), in one line: without it a model
 * reads a 40-line urllib traceback and cannot tell whether to retry. */
static void network_note(FILE *f, const struct sb_result *r, const struct sb_config *cfg)
{
	if (!r->n_net_refused)
		return;
	const struct sb_net_refusal *x = &r->net_refused[0];
	char hosts[1024];
	sb_netlist_format(&cfg->net, hosts, sizeof hosts);
	unsigned more = r->n_net_refused - 1 + r->net_refused_more;
	bool refused = x->status == 403; /* the list says no: the same call gets the same answer */
	const char *did = refused ? "refused" : x->status == 502 || x->status == 504 ? "could not reach" : "did not serve";
	fprintf(f, "[network] Only these hosts are reachable, through sagebox's proxy: %s (setting: network). ", hosts);
	if (x->host[0])
		fprintf(f, "The proxy %s %s:%u (%s)", did, x->host, x->port, x->why);
	else
		fprintf(f, "The proxy %s a connection (%s)", did, x->why);
	if (more)
		fprintf(f, ", and %u more connection%s", more, more == 1 ? "" : "s");
	fputs(refused ? ": retrying will not help.\n" : ".\n", f);
}

char *sb_result_text(const struct sb_result *r, const struct sb_tool *t, const struct sb_config *cfg)
{
	char *buf = NULL, verdict[1024];
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		return NULL;
	bool has_out = r->out.data && r->out.len > 0, has_err = r->err.data && r->err.len > 0;
	if (has_out)
		put_stream(f, &r->out);
	if (has_err) {
		fputs(has_out ? "\nstderr:\n" : "stderr:\n", f);
		put_stream(f, &r->err);
	}
	bool has_display = sb_display_any(&r->display);
	if (!has_out && !has_err && !has_display && !r->internal_error)
		fputs(sb_result_ok(r) ? "(no output: print() the values you want to see, or end with an expression)\n"
				      : "(no output)\n",
		      f);
	if (has_out || has_err)
		fputc('\n', f);
	sb_display_text(f, &r->display);
	sb_result_verdict(r, verdict, sizeof verdict);
	fprintf(f, "[%s]\n", verdict);
	truncation(f, "stdout", &r->out, r);
	truncation(f, "stderr", &r->err, r);
	advice(f, r, t, cfg);
	network_note(f, r, cfg);
	fclose(f);
	/* Drop the final newline: the block ends with the verdict or advice. */
	if (size > 0 && buf[size - 1] == '\n')
		buf[size - 1] = '\0';
	return buf;
}
