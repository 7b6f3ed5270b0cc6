/* Capabilities: the command starts with every capability of its user
 * namespace; it must keep none, and be unable to get any back. */
#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/native/native.h"

#define CAP_PROBE_MAX 64

int nat_drop_caps(void)
{
	/* Bounding set first (needs CAP_SETPCAP, which we still hold): no
	 * execve of a file with capabilities can ever grant one back. */
	for (int c = 0; c < CAP_PROBE_MAX; c++) {
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0) {
			if (errno == EINVAL)
				break; /* past the last capability this kernel knows */
			return -1;
		}
	}
	/* Ambient set: nothing inherited across execve. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
		return -1;
	/* Locked securebits: uid 0 semantics never grant capabilities (there is
	 * no uid 0 mapped here, this is the belt to that pair of braces). */
	unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED;
#ifdef SECBIT_NO_CAP_AMBIENT_RAISE
	bits |= SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
#endif
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0)
		return -1;
	/* Effective, permitted, inheritable: all empty. */
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof data);
	if (syscall(SYS_capset, &hdr, data) != 0)
		return -1;
	return 0;
}

bool nat_caps_none(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2];
	if (syscall(SYS_capget, &hdr, data) != 0)
		return false;
	for (int i = 0; i < 2; i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return false;
	return true;
}

bool nat_bounding_empty(void)
{
	for (int c = 0; c < CAP_PROBE_MAX; c++) {
		int r = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
		if (r < 0)
			return errno == EINVAL;
		if (r > 0)
			return false;
	}
	return true;
}
