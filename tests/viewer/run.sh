#!/bin/sh
# The viewer in a real browser: Debian's chromium, headless,
# driven by puppeteer-core, on the node pinned in tests/node (tests/lib/node.sh).
# SAGEBOX_BIN: the binary under test (default: build/sagebox).
# VIEWER_ARTIFACTS: where the screenshots go (meson: BUILD/meson-logs/viewer).
set -eu
cd "$(dirname "$0")"
node_tests=$(cd .. && pwd)
. ../lib/node.sh
node_run viewer viewer "$@"
