#!/bin/sh
# meson test 'podman': prepare the machine (idempotent; builds the image only
# when it is missing, which takes minutes once), then run the tests with
# Debian's pytest. Needs root: it installs packages, creates the test user and
# checks that root's (rootful) podman is refused.
#   tests/podman/run.sh [pytest args...]      SAGEBOX_BIN=path/to/sagebox
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ]; then
	echo "podman tests: skipped (run as root; they switch to the user sagebox-test)" >&2
	exit 77
fi
: "${SAGEBOX_BIN:=$here/../../build/sagebox}"
export SAGEBOX_BIN
"$here/../../scripts/podman-test-setup" "$SAGEBOX_BIN"
exec /usr/bin/python3 -m pytest -q -p no:cacheprovider -o addopts= "$here" "$@"
