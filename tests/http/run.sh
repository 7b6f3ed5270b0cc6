#!/bin/sh
# The HTTP transport and protocol revision 2026-07-28 suite: the official
# MCP conformance suite, the official SDK clients v1 and v2 over stdio and
# HTTP, HTTP abuse, and the server-wide totals of sessions and jobs
# shared by several clients, against the real binary, on the node pinned in
# tests/node (tests/lib/node.sh; the conformance suite and SDK v2 need a
# newer node than Debian's). The locked packages are installed on first use
# (scripts/install-deps --test does it ahead of time).
# SAGEBOX_BIN: the binary under test (default: build/sagebox).
set -eu
cd "$(dirname "$0")"
node_tests=$(cd .. && pwd)
. ../lib/node.sh
node_run http http "$@"
