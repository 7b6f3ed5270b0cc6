#!/bin/sh
# meson test 'podman': prepare the machine (idempotent; builds the image only
# when it is missing, which takes minutes once), then run the tests with
# Debian's pytest. Needs root: it installs packages, creates the test user and
# checks that root's (rootful) podman is refused. Without root the suite is
# skipped (exit 77) and says so; scripts/test lists it as skipped.
#   tests/podman/run.sh [pytest args...]      SAGEBOX_BIN=path/to/sagebox
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ]; then
	echo "podman tests: skipped: they need root (to create the user sagebox-test and switch to it); run scripts/test as root" >&2
	exit 77
fi
: "${SAGEBOX_BIN:=$here/../../build/sagebox}"
SAGEBOX_BIN=$(realpath "$SAGEBOX_BIN")
export SAGEBOX_BIN
# One podman test run at a time on a machine: every run uses the same test
# user, and each removes what it finds of "ours" at its start and asserts
# none is left after each test, so a second run at the same time removed
# the first's session containers ("its sandbox ended") and failed its checks.
# (flock -o: the lock's fd is not passed on to pytest, sagebox or a sandbox.)
lock=/run/lock/sagebox-podman-tests.lock
flock -o "$lock" "$here/../../scripts/podman-test-setup" "$SAGEBOX_BIN"
# From /: the test user may not be able to enter the caller's directory (a
# checkout under /root is mode 700); conftest.py gives it a copy of the binary.
cd /
exec flock -o "$lock" /usr/bin/python3 -m pytest -q -rfEs -p no:cacheprovider -o addopts= "$here" "$@"
