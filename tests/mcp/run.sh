#!/bin/sh
# Runs the MCP test suite (the MCP TypeScript SDK and the MCP Inspector,
# locked here) with node's test runner on the node pinned in tests/node
# (tests/lib/node.sh), installing the locked packages on first use.
# SAGEBOX_BIN: the binary under test (default: build/sagebox).
set -eu
cd "$(dirname "$0")"
node_tests=$(cd .. && pwd)
. ../lib/node.sh
node_run mcp mcp "$@"
