/* Unix stream sockets by path: a connect and a bind, the address built with
 * its length checked (a sun_path is 108 bytes; a longer path is refused with
 * ENAMETOOLONG, never truncated into some other path). */
#ifndef SAGEBOX_UNIX_SOCKET_H
#define SAGEBOX_UNIX_SOCKET_H

/* A SOCK_STREAM socket (close-on-exec, plus `flags`, e.g. SOCK_NONBLOCK)
 * connected to path, or -1 with errno. */
int sb_unix_connect(const char *path, int flags);
/* A close-on-exec SOCK_STREAM socket bound to path, not yet listening (the
 * caller sets the mode or listens in the order it needs), or -1 with errno. */
int sb_unix_bind(const char *path);

#endif
