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
"$here/../../scripts/podman-test-setup" "$SAGEBOX_BIN"
# From /: the test user may not be able to enter the caller's directory (a
# checkout under /root is mode 700); conftest.py gives it a copy of the binary.
cd /
exec /usr/bin/python3 -m pytest -q -rs -p no:cacheprovider -o addopts= "$here" "$@"
