/* What `sagebox mcp --http` is told, checked before anything listens: the
 * listen address, TLS files, authentication and limits. Pure (no socket,
 * no thread), so each rule is unit-tested (tests/unit/test_http_options.c). */
#ifndef SAGEBOX_TRANSPORT_HTTP_OPTIONS_H
#define SAGEBOX_TRANSPORT_HTTP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "core/handle.h"
#include "transport/http_core.h"
#include "util/error.h"

struct sb_http_options {
	struct sb_http_bind bind;
	const char *tls_cert, *tls_key;   /* PEM files; both or neither */
	const char *token_file;           /* NULL: the default token */
	bool no_auth;                     /* --insecure-no-auth (loopback only) */
	bool allow_remote;                /* --allow-remote: an address other than loopback */
	struct sb_http_limits limits;
	unsigned max_connections;         /* open connections (threads) at once */
	unsigned request_timeout_s;       /* to send one whole request */
	unsigned idle_timeout_s;          /* a connection with no traffic */
	char instance[SB_INSTANCE_MAX + 1]; /* named by the Mcp-Session-Ids handed out */
	bool metrics_listen;              /* --metrics-listen: /metrics and /health on metrics_bind too */
	struct sb_http_bind metrics_bind;
};

#define SB_HTTP_MAX_CONNECTIONS 256
#define SB_HTTP_REQUEST_TIMEOUT_S 30
#define SB_HTTP_IDLE_TIMEOUT_S 120
/* A new connection's time to send its first request's headers (or the
 * request timeout, when shorter): http_gate.h. */
#define SB_HTTP_HEADER_TIMEOUT_S 10

/* Defaults for everything but the address. */
void sb_http_options_defaults(struct sb_http_options *o);

/* Parse "[ADDR:]PORT" ("8080", "127.0.0.1:8080", "[::1]:8080",
 * "0.0.0.0:8080", "localhost:8080") into o->bind. */
int sb_http_parse_listen(const char *spec, struct sb_http_options *o, struct sb_error *err);
/* The same into b (flag: the option's name, for errors). */
int sb_http_parse_bind(const char *flag, const char *spec, struct sb_http_bind *b, struct sb_error *err);

/* 0 if the options may be used together and on this address (e.g. a
 * non-loopback address needs allow_remote), else -1 naming the problem and
 * the fix. sb_http_start checks them again. */
int sb_http_check_options(const struct sb_http_options *o, struct sb_error *err);

/* A new connection's time to send its first request's headers. */
unsigned sb_http_header_timeout(const struct sb_http_options *o);

/* The socket address of b (parsed by sb_http_parse_listen) in ss; returns its length. */
socklen_t sb_http_sockaddr(const struct sb_http_bind *b, struct sockaddr_storage *ss);

/* The URL clients use, "http://127.0.0.1:8080/mcp" ("https", "[::1]"). */
void sb_http_url_format(const struct sb_http_bind *b, unsigned port, bool tls, char *buf, size_t size);

/* Read the TLS certificate and key files (PEM, at most 1 MiB each; both
 * given) into new strings. */
int sb_http_tls_load(const struct sb_http_options *o, char **cert, char **key, struct sb_error *err);

#endif
