/* The native backend's spawn is thread-safe: 8 threads spawn 4 sandboxes
 * each at once, and every sandbox gives back its own output and exit
 * status (a spawn that mixed up another thread's pipes, cgroup or report
 * would show here). Needs user namespaces, as the sandbox suite does. */
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config/config.h"
#include "runner/backend.h"
#include "sandbox/sandbox.h"

#define THREADS 8
#define ROUNDS 4

static struct sb_config cfg;
static struct sb_backend *native;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void one(long id, int round)
{
	char code[64];
	snprintf(code, sizeof code, "echo hello-%ld-%d; exit %d", id, round, (int)(id % 7));
	const char *argv[] = {"/bin/sh", "-c", code, NULL};
	struct sb_sandbox_req req = {.argv = argv, .limits = &cfg.limits};
	struct sb_sandbox sb;
	struct sb_error err = {0};
	if (sb_backend_spawn(native, &req, &sb, &err) != 0) {
		pthread_mutex_lock(&mu);
		fprintf(stderr, "spawn %ld: %s (%s)\n", id, err.msg, err.hint);
		CHECK(false); /* (spawn failed) */
		pthread_mutex_unlock(&mu);
		return;
	}
	close(sb.stdin_fd);
	char buf[256] = "";
	ssize_t n = 0, r;
	while (n < (ssize_t)sizeof buf - 1 && (r = read(sb.stdout_fd, buf + n, sizeof buf - 1 - (size_t)n)) > 0)
		n += r;
	buf[n] = '\0';
	struct sb_exit ex = {0};
	int waited = sb_backend_wait(&sb, &ex, &err);
	close(sb.stdout_fd);
	close(sb.stderr_fd);
	json_decref(sb.enforced);
	char want[64];
	snprintf(want, sizeof want, "hello-%ld-%d\n", id, round);
	pthread_mutex_lock(&mu);
	if (waited != 0 || strcmp(buf, want) != 0 || ex.exit_code != (int)(id % 7))
		fprintf(stderr, "thread %ld round %d: got '%s' exit %d signal %d\n", id, round, buf, ex.exit_code,
			ex.signal);
	CHECK(waited == 0 && !strcmp(buf, want) && ex.exit_code == (int)(id % 7));
	pthread_mutex_unlock(&mu);
}

static void *worker(void *arg)
{
	for (int round = 0; round < ROUNDS; round++)
		one((long)arg, round);
	return NULL;
}

int main(void)
{
	sb_config_defaults(&cfg);
	snprintf(cfg.backend, sizeof cfg.backend, "native");
	struct sb_error err = {0};
	if (!(native = sb_runner_backend_open(&cfg, &err))) {
		fprintf(stderr, "the native backend cannot be opened: %s (%s)\n", err.msg, err.hint);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		CHECK(pthread_create(&t[i], NULL, worker, (void *)i) == 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	sb_backend_close(native);
	return check_summary();
}
