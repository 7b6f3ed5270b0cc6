#!/bin/sh
# meson test 'sessions': sessions, workspace files and background jobs
# through the real binary and the official MCP TypeScript SDK
# (the locked packages of tests/mcp, installed there on first use), on the
# node pinned in tests/node (tests/lib/node.sh).
# SAGEBOX_BIN: the binary under test (default: build/sagebox).
set -eu
cd "$(dirname "$0")"
node_tests=$(cd .. && pwd)
. ../lib/node.sh
node_run sessions mcp "$@"
