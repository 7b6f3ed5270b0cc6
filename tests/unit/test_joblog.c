/* The background job log (runner/jobs/joblog.c): the last SB_JOBLOG_KEEP bytes
 * kept in a ring on disk (not in sagebox's memory), offsets
 * counting from the job's first byte, pages and the tail read back across
 * the ring's wrap, and a dropped log that says its bytes are gone. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "runner/jobs/joblog.h"

/* The byte at offset o of the test's stream. */
static char at(uint64_t o)
{
	return (char)('a' + (o * 7 + o / 251) % 26);
}

static void write_stream(struct sb_joblog *l, uint64_t from, uint64_t n, size_t piece)
{
	char *buf = malloc(piece);
	for (uint64_t o = from; o < from + n;) {
		size_t k = from + n - o < piece ? (size_t)(from + n - o) : piece;
		for (size_t i = 0; i < k; i++)
			buf[i] = at(o + i);
		CHECK(l->sink.ops->write(&l->sink, (o / piece) % 2 ? SB_STREAM_STDERR : SB_STREAM_STDOUT, buf, k) == 0);
		o += k;
	}
	free(buf);
}

static bool page_is(struct sb_joblog *l, uint64_t offset, size_t max, uint64_t want_from, size_t want_len)
{
	size_t len;
	uint64_t next, dropped, end;
	char *p = sb_joblog_page(l, offset, max, &len, &next, &dropped, &end);
	bool ok = p && len == want_len && next == want_from + want_len &&
		  dropped == (offset < want_from ? want_from - offset : 0);
	for (size_t i = 0; ok && i < len; i++)
		ok = p[i] == at(want_from + i);
	free(p);
	return ok;
}

int main(void)
{
	char dir[] = "/tmp/sagebox-joblog-test-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	setenv("XDG_STATE_HOME", dir, 1);

	struct sb_joblog l;
	sb_joblog_init(&l);
	CHECK(page_is(&l, 0, 100, 0, 0)); /* nothing written: no file yet */
	CHECK(l.fd < 0);
	write_stream(&l, 0, 1000, 333);
	CHECK(l.fd >= 0 && sb_joblog_kept(&l) == 1000 && sb_joblog_gone(&l) == 0);
	CHECK(page_is(&l, 10, 50, 10, 50));

	/* Past the ring: 3.5 rings' worth in odd pieces, then one write larger than the ring. */
	uint64_t total = 1000 + 3 * (uint64_t)SB_JOBLOG_KEEP + SB_JOBLOG_KEEP / 2;
	write_stream(&l, 1000, total - 1000, 65521);
	CHECK(sb_joblog_bytes(&l) == total);
	CHECK(sb_joblog_kept(&l) == SB_JOBLOG_KEEP && sb_joblog_gone(&l) == total - SB_JOBLOG_KEEP);
	uint64_t base = total - SB_JOBLOG_KEEP;
	CHECK(page_is(&l, 0, 4096, base, 4096));                     /* below: from the oldest kept */
	uint64_t wrap = (total / SB_JOBLOG_KEEP) * SB_JOBLOG_KEEP;   /* the ring's seam */
	CHECK(page_is(&l, wrap - 100, 200, wrap - 100, 200));        /* across it */
	CHECK(page_is(&l, total - 10, 100, total - 10, 10));         /* the end */
	size_t n;
	char *tail = sb_joblog_tail(&l, 2000, &n);
	CHECK(tail && n == 2000 && tail[1999] == at(total - 1) && tail[0] == at(total - 2000));
	free(tail);
	write_stream(&l, total, SB_JOBLOG_KEEP + 5, SB_JOBLOG_KEEP + 5);
	total += SB_JOBLOG_KEEP + 5;
	CHECK(page_is(&l, total - SB_JOBLOG_KEEP, 300, total - SB_JOBLOG_KEEP, 300));

	/* Dropped: nothing kept, pages say so, the file is closed. */
	sb_joblog_drop(&l);
	CHECK(sb_joblog_was_dropped(&l) && sb_joblog_kept(&l) == 0 && sb_joblog_gone(&l) == total && l.fd < 0);
	CHECK(page_is(&l, 0, 100, total, 0));
	sb_joblog_free(&l);

	/* The file has no name: nothing is left in the state directory. */
	char sub[sizeof dir + 16];
	snprintf(sub, sizeof sub, "%s/sagebox", dir);
	CHECK(rmdir(sub) == 0 && rmdir(dir) == 0);
	return check_summary();
}
