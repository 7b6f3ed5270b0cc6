#!/bin/sh
# meson test 'sessions': sessions, workspace files and background jobs
# (issue 10) through the real binary and the official MCP TypeScript SDK
# (the locked packages of tests/mcp, installed there on first use).
# SAGEBOX_BIN: the binary under test (default: build/sagebox).
set -eu
cd "$(dirname "$0")"
for tool in node npm; do
	command -v "$tool" >/dev/null 2>&1 ||
		{ echo "sessions tests: $tool is not installed: run scripts/install-deps --test" >&2; exit 1; }
done
if [ ! -d ../mcp/node_modules/@modelcontextprotocol/sdk ]; then
	(cd ../mcp && npm ci --no-audit --no-fund >&2)
fi
exec node --test --test-concurrency=1 "$@"
