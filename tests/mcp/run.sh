#!/bin/sh
# Runs the MCP test suite: installs the locked npm dependencies (the MCP
# TypeScript SDK and the MCP Inspector) on first use, then node's test runner.
# SAGEBOX_BIN: the binary under test (default: build/sagebox).
set -eu
cd "$(dirname "$0")"
for tool in node npm; do
	command -v "$tool" >/dev/null 2>&1 ||
		{ echo "mcp tests: $tool is not installed: run scripts/install-deps --test" >&2; exit 1; }
done
if [ ! -d node_modules/@modelcontextprotocol/sdk ] || [ ! -d node_modules/@modelcontextprotocol/inspector ]; then
	npm ci --no-audit --no-fund >&2
fi
exec node --test --test-concurrency=1 "$@"
