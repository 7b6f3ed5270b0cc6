/* The head of one request to sagebox's proxy, parsed by
 * http-parser (Debian's libhttp-parser): CONNECT host:port, or a plain
 * request in absolute form (GET http://host/path). Pure: no I/O, so the
 * fuzzer drives it (tests/fuzz/fuzz_proxy.c). */
#ifndef SAGEBOX_NET_REQUEST_H
#define SAGEBOX_NET_REQUEST_H

#include <http_parser.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config/netlist.h"

#define SB_PROXY_HEAD_MAX 16384

struct sb_proxy_req {
	bool connect;               /* CONNECT: a tunnel after "200" */
	char host[SB_NET_HOST_MAX]; /* the requested name, normalised (config/netlist.h) */
	bool host_is_ip;
	unsigned port;
	size_t head_len;            /* bytes of the client's input the head took */
	char *upstream;             /* plain requests: the head to send on (malloc'd) */
	size_t upstream_len;
};

/* Parse buf[0, len) from its start. 0: a complete head in *r (free it with
 * sb_proxy_req_free); 1: incomplete, read more; -1: refused, *why says why
 * in one line (the proxy answers 400 with it). */
int sb_proxy_req_parse(const char *buf, size_t len, struct sb_proxy_req *r, const char **why);
void sb_proxy_req_free(struct sb_proxy_req *r);

/* Where a plain request's message ends in the client's bytes after its
 * head: its body by Content-Length or chunked framing, read by
 * http-parser too. Whatever follows (a pipelined second request) never
 * goes upstream: one client connection carries exactly one request, the
 * one that was checked. */
struct sb_proxy_body {
	http_parser p;
	bool done; /* the message ended: the rest is not relayed */
};

/* Start after a head sb_proxy_req_parse accepted (head: its head_len
 * bytes). A message without a body is done at once. */
void sb_proxy_body_start(struct sb_proxy_body *b, const char *head, size_t head_len);
/* How many of buf[0, len) belong to the message: len while it goes on,
 * fewer where it ends (then b->done). -1: the body's framing is broken
 * (*why says how, in one line). */
ssize_t sb_proxy_body_take(struct sb_proxy_body *b, const char *buf, size_t len, const char **why);

#endif
