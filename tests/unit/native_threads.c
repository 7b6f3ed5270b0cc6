/* Spawn native sandboxes from 8 threads at once (4 rounds each) and check
 * every one got its own output and exit status: spawn() must be thread-safe.
 * Not wired into meson (needs user namespaces); build by hand:
 *   cc -std=c11 -D_GNU_SOURCE -Isrc -Ibuild/src tests/unit/native_threads.c build/libsagebox-core.a \
 *      -ljansson -lseccomp -linih -lpthread -lm -o /tmp/native_threads */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include "sandbox/sandbox.h"

static struct sb_config cfg;
static struct sb_backend *native;
static int failures;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	long id = (long)arg;
	for (int round = 0; round < 4; round++) {
		char code[64];
		snprintf(code, sizeof code, "echo hello-%ld-%d; exit %d", id, round, (int)(id % 7));
		const char *argv[] = {"/bin/sh", "-c", code, NULL};
		struct sb_sandbox_req req = {.argv = argv, .limits = &cfg.limits};
		struct sb_sandbox sb;
		struct sb_error err = {0};
		if (sb_backend_spawn(native, &req, &sb, &err) != 0) {
			fprintf(stderr, "spawn %ld: %s\n", id, err.msg);
			pthread_mutex_lock(&mu); failures++; pthread_mutex_unlock(&mu);
			continue;
		}
		close(sb.stdin_fd);
		char buf[256] = "";
		ssize_t n = 0, r;
		while ((r = read(sb.stdout_fd, buf + n, sizeof buf - 1 - (size_t)n)) > 0) n += r;
		buf[n] = 0;
		struct sb_exit ex;
		sb_backend_wait(&sb, &ex, &err);
		close(sb.stdout_fd); close(sb.stderr_fd);
		json_decref(sb.enforced);
		char want[64];
		snprintf(want, sizeof want, "hello-%ld-%d\n", id, round);
		if (strcmp(buf, want) != 0 || ex.exit_code != (int)(id % 7)) {
			fprintf(stderr, "thread %ld round %d: got %s exit %d sig %d\n", id, round, buf, ex.exit_code, ex.signal);
			pthread_mutex_lock(&mu); failures++; pthread_mutex_unlock(&mu);
		}
	}
	return NULL;
}

int main(void)
{
	sb_config_defaults(&cfg);
	struct sb_error err = {0};
	if (!(native = sb_runner_backend_open(&cfg, &err))) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	pthread_t t[8];
	for (long i = 0; i < 8; i++) pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
	printf("failures: %d\n", failures);
	return failures != 0;
}
