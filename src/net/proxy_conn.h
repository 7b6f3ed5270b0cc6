/* The proxy's connections (internal to src/net): proxy.c runs the loop
 * (sockets, relaying, caps, control); proxy_decide.c decides where a
 * request may go (parse, allow-list, lookup, the checked address);
 * proxy_conn.c, below both, keeps a connection: its epoll interest, what
 * goes upstream with the head, our answer, its audit line and refusal
 * report, its end. */
#ifndef SAGEBOX_NET_PROXY_CONN_H
#define SAGEBOX_NET_PROXY_CONN_H

#include <netdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "config/netlist.h"
#include "net/request.h"

/* Caps per sandbox (per listening socket). */
#define SB_PROXY_CONNS_MAX 32                  /* connections at once */
#define SB_PROXY_BYTES_MAX (2ull << 30)        /* bytes each way over the sandbox's life */
#define SB_PROXY_IDLE_S 120                    /* a connection silent this long is closed */
#define SB_PROXY_HEAD_S 15                     /* the request head must arrive within this */
#define SB_PROXY_LINGER_S 10                   /* after our answer, the client's bytes are dropped this long at most */

#define BUF 16384

enum kind { K_LISTENER, K_CLIENT, K_UPSTREAM, K_CONTROL, K_RESOLVED };
enum state { S_HEAD, S_RESOLVING, S_CONNECTING, S_RELAY, S_DONE };

struct handle {
	enum kind kind;
	void *p;
};

struct listener {
	struct handle h;
	int fd;
	unsigned id;
	char who[128];
	unsigned conns;    /* all open, the over-cap ones too */
	unsigned over;     /* over the cap: waiting for their head to hear 503 */
	uint64_t up, down; /* bytes over the sandbox's life */
	bool gone;         /* "del": closed, freed when its last connection ends */
	struct listener *next;
};

struct pipe_buf {
	char data[BUF];
	size_t off, len;
};

struct conn {
	struct handle hc, hu;
	struct listener *l;
	char who[128];            /* the sandbox's label when it connected (a
				     warm worker's changes with each call) */
	int cfd, ufd;
	enum state st;
	char head[SB_PROXY_HEAD_MAX];
	size_t head_n;
	struct sb_proxy_req req;
	bool have_req;
	struct addrinfo *ai, *next_ai;
	int gai_rc;
	char refused[320];        /* the reason, for the audit line */
	char connect_err[160];
	struct pipe_buf c2u, u2c;
	/* A plain request: its body goes upstream through `body` (request.h),
	 * what came with the head first (head[pending_off, head_n), as c2u
	 * has room); the client's bytes after the message are read and
	 * dropped. */
	bool framed;
	struct sb_proxy_body body;
	size_t pending_off;
	bool c_eof, u_eof, close_after_flush, allowed;
	/* After an answer of ours: sent, our side shut, the client's bytes
	 * read and dropped until its EOF or linger_until, so that closing
	 * with its bytes unread never resets the answer away. */
	bool lingering;
	time_t linger_until;
	bool audited;             /* its line is written (at the answer, when lingering) */
	bool over_cap;            /* accepted over SB_PROXY_CONNS_MAX: answered 503 */
	bool connected;           /* reached the host: relayed */
	uint64_t up, down;
	time_t started, last;
	struct conn *next;
};

/* A connection's outcome, as the server counts it (spawn.c). */
enum px_outcome { PX_ALLOWED, PX_REFUSED, PX_FAILED, PX_OUTCOMES };

struct proxy {
	const struct sb_netlist *list;
	int ep, audit_fd, resolved[2];
	int control_fd;                  /* -1: no sagebox to tell (sagebox proxy --listen) */
	uint64_t untold[PX_OUTCOMES];    /* outcomes not yet sent to the server */
	struct listener *listeners;
	struct conn *conns;
	struct handle resolved_h, control_h;
};

/* Epoll interest of both ends, from the buffers and the state. */
void px_arm(struct proxy *px, struct conn *c);
/* Whether the client's next bytes can be taken now: relayed, or dropped
 * (after the request's message, or after our answer). */
bool px_client_readable(const struct conn *c);
/* Answer the client (403 refusal, 400 not a request, 502 unreachable, 503
 * over the cap; a one-line body for the model), report it to sagebox, and
 * close once it is sent. */
__attribute__((format(printf, 4, 5))) void px_answer(struct proxy *px, struct conn *c, int code, const char *fmt,
						     ...);
/* Bytes of the client's that came with the head and are still to go upstream. */
static inline size_t px_pending(const struct conn *c)
{
	return c->framed ? c->head_n - c->pending_off : 0;
}
/* Move what came with the head into c2u, as far as it has room and the
 * message goes. -1: the body's framing is broken (connect_err says how;
 * nothing of it or after it is sent). */
int px_feed_pending(struct conn *c);
/* A plain request's new bytes at the end of c2u (from `before` on): keep
 * the message's, drop what follows it. -1: its framing is broken. */
int px_frame(struct conn *c, size_t before);
/* One audit line: of a connection, or of one closed unread (no request). */
void px_audit_line(struct proxy *px, const char *who, const char *host, unsigned port, bool allowed,
		   const char *reason, uint64_t up, uint64_t down);
void px_audit(struct proxy *px, struct conn *c);
/* Close and free c (after its audit line); a lookup still running finishes first. */
void px_conn_close(struct proxy *px, struct conn *c);
/* Send sagebox the outcomes not yet told, without waiting (a full socket:
 * with a later tally). */
void px_tell_tally(struct proxy *px);
/* Unlink and free a listener (closed by "del", its last connection gone). */
void px_listener_free(struct proxy *px, struct listener *l);

#endif
