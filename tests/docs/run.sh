#!/bin/sh
# meson test 'docs': what the README and the user guide tell a user to run,
# run as written (blocks marked "tested"), and every MCP host entry they show
# started as a host starts it, through the official MCP TypeScript SDK (the
# locked packages of tests/mcp), on the node pinned in tests/node.
# SAGEBOX_BIN: the binary under test (default: build/sagebox).
set -eu
cd "$(dirname "$0")"
node_tests=$(cd .. && pwd)
. ../lib/node.sh
node_run docs mcp "$@"
