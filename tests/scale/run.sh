#!/bin/sh
# The scale suite: several `sagebox mcp --http` instances behind Debian's
# haproxy with docs/deploy/haproxy.cfg, scraped by Debian's prometheus, all
# on loopback, driven by the official SDK clients v1 and v2; and the
# Kubernetes manifests of deploy/k8s against the Kubernetes schemas. On the
# node pinned in tests/node (tests/lib/node.sh); haproxy and prometheus
# come from scripts/install-deps --test.
# SAGEBOX_BIN: the binary under test (default: build/sagebox).
set -eu
cd "$(dirname "$0")"
for tool in haproxy prometheus; do
	command -v "$tool" >/dev/null 2>&1 ||
		{ echo "tests/scale: $tool is not installed: run scripts/install-deps --test" >&2; exit 1; }
done
node_tests=$(cd .. && pwd)
. ../lib/node.sh
node_run scale scale "$@"
