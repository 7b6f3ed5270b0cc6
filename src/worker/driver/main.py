"""argv dispatch. The bundle (bundle.py) calls main(sys.argv[1:]); importing
this module runs nothing, so tests can import every module."""
import sys

USAGE = ("sagebox driver: usage: worker KIND SHELL OWN_PIDNS WARM_MIB | fresh KIND SHELL OWN_PIDNS"
         " | session LANG SHELL OWN_PIDNS WORKSPACE LIMITS_JSON\n")
# "the sandbox failed" (core/exit_status.h SB_EXIT_SANDBOX)
EXIT_USAGE = 125
# The user's package presets, bound read-only here when their directory
# exists, even empty (core/paths.h SB_PACKAGES_MOUNT, `sagebox packages
# add`): a plain sys.path entry, its .pth files not run. What is added later
# is found at the next import (FileFinder re-lists a directory whose mtime
# changed).
PACKAGES = "/opt/sagebox/site-packages"


def add_packages(path=None):
    """The user's packages at the END of sys.path: Sage's own modules are
    found first, so a package's copy of a dependency never replaces the one
    Sage was built with. Inherited by every job this interpreter forks."""
    import os
    path = path or PACKAGES
    if os.path.isdir(path) and path not in sys.path:
        sys.path.append(path)


def main(argv):
    add_packages()
    if argv[:1] in (["worker"], ["fresh"], ["session"]):
        # network set: the relay to the proxy, before any code runs.
        from . import netrelay
        netrelay.start()
    if len(argv) == 5 and argv[0] == "worker":
        from .zygote import run_worker
        sys.exit(run_worker(argv[1], argv[2], argv[3] == "1", int(argv[4])))
    if len(argv) == 4 and argv[0] == "fresh":
        from .zygote import run_worker
        sys.exit(run_worker(argv[1], argv[2], argv[3] == "1", 0, one_job=True))
    if len(argv) == 6 and argv[0] == "session":
        from .session import run_session
        sys.exit(run_session(argv[1], argv[2], argv[3] == "1", argv[4], argv[5]))
    sys.stderr.write(USAGE)
    sys.exit(EXIT_USAGE)
