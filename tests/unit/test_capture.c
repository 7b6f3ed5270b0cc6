#include <stdlib.h>

#include "check.h"
#include "runner/capture.h"
#include "util/utf8.h"

int main(void)
{
	struct sb_capture c;
	struct sb_stream s = {0};

	/* Under the cap: everything, untouched. */
	CHECK(sb_capture_init(&c, "stdout", 64) == 0);
	sb_capture_add(&c, "hello\n", 6);
	CHECK(!sb_capture_truncated(&c));
	CHECK(sb_capture_finish(&c, &s) == 0);
	CHECK(s.len == 6 && !memcmp(s.data, "hello\n", 6) && !s.truncated && s.total_bytes == 6);
	free(s.data);
	sb_capture_free(&c);

	/* Between half the cap and the cap: nothing is cut, so the tail part
	 * follows the head (found by tests/fuzz: it was dropped, and 48 KiB
	 * of a 96 KiB print came back as "not truncated"). */
	CHECK(sb_capture_init(&c, "stdout", 64) == 0);
	sb_capture_add(&c, "0123456789abcdefghijklmnopqrstuv", 32);
	sb_capture_add(&c, "ABCDEFGHIJKLMNOPQRSTUVWXYZ!", 27);
	CHECK(!sb_capture_truncated(&c));
	CHECK(sb_capture_finish(&c, &s) == 0);
	CHECK(s.len == 59 && !s.truncated && s.total_bytes == 59 &&
	      !memcmp(s.data, "0123456789abcdefghijklmnopqrstuvABCDEFGHIJKLMNOPQRSTUVWXYZ!", 59));
	free(s.data);
	sb_capture_free(&c);

	/* Over the cap: head, a marker with the count, tail. */
	CHECK(sb_capture_init(&c, "stdout", 64) == 0);
	char line[16];
	for (int i = 0; i < 1000; i++) {
		int n = snprintf(line, sizeof line, "line %04d\n", i);
		sb_capture_add(&c, line, (size_t)n);
	}
	CHECK(sb_capture_truncated(&c));
	CHECK(sb_capture_finish(&c, &s) == 0);
	CHECK(s.truncated && s.total_bytes == 10000);
	CHECK(!strncmp(s.data, "line 0000\n", 10));
	CHECK_STR_CONTAINS(s.data, "line 0999\n");
	CHECK_STR_CONTAINS(s.data, "bytes of stdout cut here");
	CHECK_STR_CONTAINS(s.data, "10000 bytes in all");
	CHECK(strstr(s.data, "line 0500") == NULL);
	free(s.data);
	sb_capture_free(&c);

	/* A chunk far larger than the cap at once. */
	CHECK(sb_capture_init(&c, "stderr", 32) == 0);
	char big[1000];
	memset(big, 'a', sizeof big);
	big[999] = 'Z';
	sb_capture_add(&c, big, sizeof big);
	CHECK(sb_capture_finish(&c, &s) == 0);
	CHECK(s.data[s.len - 1] == 'Z');
	free(s.data);
	sb_capture_free(&c);

	/* Output that is not UTF-8 comes back as valid UTF-8. */
	CHECK(sb_capture_init(&c, "stdout", 64) == 0);
	sb_capture_add(&c, "ok \xff\xfe \xc3\xa9", 9);
	CHECK(sb_capture_finish(&c, &s) == 0);
	CHECK(sb_utf8_valid(s.data, s.len, NULL));
	CHECK_STR_CONTAINS(s.data, "\xc3\xa9");
	free(s.data);
	sb_capture_free(&c);

	/* A long sandbox error makes a verdict cut at a character boundary
	 * (found by tests/fuzz: cut inside "é", the run tool's whole text
	 * block was replaced by "could not be encoded"). */
	struct sb_result r;
	sb_result_init(&r);
	char err[600] = "x";
	for (int i = 0; i < 299; i++)
		memcpy(err + 1 + 2 * i, "\xc3\xa9", 2);
	err[599] = '\0';
	r.internal_error = err;
	char verdict[64];
	sb_result_verdict(&r, verdict, sizeof verdict);
	CHECK(!strncmp(verdict, "sandbox error: x\xc3\xa9", 18) && strlen(verdict) == 62 &&
	      sb_utf8_valid(verdict, strlen(verdict), NULL));
	r.internal_error = NULL;

	/* UTF-8 validation. */
	CHECK(sb_utf8_valid("\xe2\x82\xac", 3, NULL));
	CHECK(!sb_utf8_valid("\xc0\xaf", 2, NULL));          /* overlong */
	CHECK(!sb_utf8_valid("\xed\xa0\x80", 3, NULL));      /* surrogate */
	CHECK(!sb_utf8_valid("\xf4\x90\x80\x80", 4, NULL));  /* > U+10FFFF */
	CHECK(!sb_utf8_valid("\xe2\x82", 2, NULL));          /* cut short */
	return check_summary();
}
