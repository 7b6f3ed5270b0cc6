/* The process exit statuses sagebox gives meaning to, named once. `sagebox
 * run` exits with the code's own status, or one of these; a sandbox's child
 * that fails before exec exits with SB_EXIT_SANDBOX so the parent can tell
 * "the sandbox failed" from "the code failed" (the isolate convention). */
#ifndef SAGEBOX_EXIT_STATUS_H
#define SAGEBOX_EXIT_STATUS_H

enum sb_exit_status {
	SB_EXIT_OK = 0,
	SB_EXIT_FAILURE = 1,       /* a command of sagebox's own failed */
	SB_EXIT_USAGE = 2,         /* bad flags or settings */
	SB_EXIT_TIMEOUT = 124,     /* the time limit killed the code (as timeout(1)) */
	SB_EXIT_SANDBOX = 125,     /* the sandbox could not be set up or failed */
	SB_EXIT_SIGNAL_BASE = 128, /* 128 + N: signal N killed the code */
};

#endif
