/* util/clock: sb_cond_wait_ms on a condition variable made by sb_cond_init
 * times out after its milliseconds (measured on the monotonic clock it
 * waits on), and returns at once when signalled. */
#include <errno.h>
#include <pthread.h>

#include "check.h"
#include "util/clock.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;
static int flag;

static void *signaller(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	flag = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(void)
{
	CHECK(sb_cond_init(&cv) == 0);
	pthread_mutex_lock(&mu);
	uint64_t t0 = sb_now_ms();
	int rc = sb_cond_wait_ms(&cv, &mu, 120);
	uint64_t took = sb_now_ms() - t0;
	CHECK(rc == ETIMEDOUT);
	CHECK(took >= 119 && took < 5000);
	/* Over a second boundary of the nanoseconds' carry. */
	t0 = sb_now_ms();
	CHECK(sb_cond_wait_ms(&cv, &mu, 1999) == ETIMEDOUT);
	took = sb_now_ms() - t0;
	CHECK(took >= 1998 && took < 8000);

	pthread_t th;
	t0 = sb_now_ms();
	CHECK(pthread_create(&th, NULL, signaller, NULL) == 0);
	while (!flag && sb_now_ms() - t0 < 10000)
		sb_cond_wait_ms(&cv, &mu, 10000);
	took = sb_now_ms() - t0;
	pthread_mutex_unlock(&mu);
	pthread_join(th, NULL);
	CHECK(flag == 1);
	CHECK(took < 5000);
	pthread_cond_destroy(&cv);
	return check_summary();
}
