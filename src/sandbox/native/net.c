/* Networking: the new network namespace has only a loopback device, down.
 * Bring it up so local IPC over 127.0.0.1 works; there is no route out. */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/native/native.h"

int nat_loopback_up(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	memcpy(ifr.ifr_name, "lo", 3);
	int rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (rc == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	if (rc == 0) {
		rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
		if (rc == 0 && !(ifr.ifr_flags & IFF_UP)) {
			errno = ENETDOWN;
			rc = -1;
		}
	}
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}
