/* Paths inside every sandbox, as the code and the model see them: shared
 * by the backends that make them, the runner that names them in results
 * and the tools that tell the model about them. */
#ifndef SAGEBOX_PATHS_H
#define SAGEBOX_PATHS_H

/* The working directory inside every sandbox (on the size-limited tmpfs). */
#define SB_SANDBOX_WORKDIR "/tmp/work"
/* A session's workspace: a tmpfs of its own, its working directory. */
#define SB_SANDBOX_WORKSPACE "/work"
/* The host name inside every sandbox: the host's is never shown. */
#define SB_SANDBOX_HOSTNAME "sagebox"
/* Host directories shared read-only with every sandbox (`share`). */
#define SB_SHARES_MAX 8
#define SB_SHARE_MOUNT "/data" /* each appears as /data/<its last component> */
/* With `network` set: the sandbox's own proxy socket is in this
 * directory (bound read-only, that sandbox's alone), and the driver's relay
 * serves it on 127.0.0.1 at this port, named by the proxy variables. */
#define SB_NET_MOUNT "/run/sagebox-net"
#define SB_NET_SOCKET SB_NET_MOUNT "/proxy.sock"
#define SB_NET_PORT 3128
/* The user's package presets (`sagebox packages add`, packages/packages.h):
 * bound read-only here when there are any, at the end of sys.path. */
#define SB_PACKAGES_MOUNT "/opt/sagebox/site-packages"
/* The user's project folder (`project_dir`), read-write, in the local
 * user's sessions: inside the workspace, on a filesystem of its own. */
#define SB_PROJECT_MOUNT "/work/project"
/* The driver's precompiled code, read-only (runner/warm/driver_code.h). */
#define SB_DRIVER_CODE_MOUNT "/opt/sagebox/driver-code"
#define SB_DRIVER_CODE_ENV "SAGEBOX_DRIVER_CODE"

#endif
