#!/bin/sh
# The LM Studio plugin's tests: installs its locked npm dependencies on first
# use (scripts/install-deps --test does it beforehand), type-checks and
# compiles it against the real @lmstudio/sdk (tsc), then runs its tools
# provider against a real `sagebox mcp` (SAGEBOX_BIN; default build/sagebox).
set -eu
cd "$(dirname "$0")/.."
for tool in node npm; do
	command -v "$tool" >/dev/null 2>&1 ||
		{ echo "lmstudio tests: $tool is not installed: run scripts/install-deps --test" >&2; exit 1; }
done
if [ ! -d node_modules/@lmstudio/sdk ] || [ ! -d node_modules/typescript ]; then
	npm ci --no-audit --no-fund >&2
fi
node_modules/.bin/tsc -p .
exec node --test --test-concurrency=1 test/
