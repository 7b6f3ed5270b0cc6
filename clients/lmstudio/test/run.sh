#!/bin/sh
# The LM Studio plugin's tests, on the node the Node suites pin (tests/node,
# tests/lib/node.sh; never the machine's node): installs its locked npm
# dependencies on first use (scripts/install-deps --test does it beforehand),
# type-checks and compiles it against the real @lmstudio/sdk (tsc), then runs
# its tools provider against a real `sagebox mcp` (SAGEBOX_BIN; default
# build/sagebox).
set -eu
cd "$(dirname "$0")/.."
node_tests=$(cd ../../tests && pwd)
. "$node_tests/lib/node.sh"
node_install node ../clients/lmstudio || exit 1
"$node_bin/node" node_modules/typescript/bin/tsc -p .
node_run lmstudio ../clients/lmstudio test/*.test.js
