#!/bin/bash
# On a Debian release without a sagemath package, as the normal user: the
# README's advice for Sage there ("Where Sage comes from"), as written:
# Podman with the official image, or, where a registry is out of reach,
# `sagebox image build`, then --backend podman. One result line.
set -uo pipefail
res() { echo "$*" | tee -a "$VM_RESULTS"; }
t0=$(date +%s)
rootless=$(podman info --format '{{.Host.Security.Rootless}}' 2>&1)
if [ "$rootless" != true ]; then
	res "FAIL Sage as the README advises: podman info as desk printed '$rootless', not true (the once-per-machine step)"
	exit 0
fi
if timeout 120 podman pull docker.io/sagemath/sagemath:latest >/tmp/pull.log 2>&1; then
	how="podman pull docker.io/sagemath/sagemath:latest"
	args=(--backend podman)
else
	echo "podman pull: $(tail -n 1 /tmp/pull.log)"
	timeout 4800 "$SAGEBOX_BIN" image build >/tmp/image-build.log 2>&1 || {
		tail -n 30 /tmp/image-build.log
		res "FAIL Sage as the README advises: podman pull failed ($(tail -n 1 /tmp/pull.log)), then sagebox image build failed: $(tail -n 1 /tmp/image-build.log)"
		exit 0
	}
	tag=$(grep -oE 'localhost/sagebox-sage:[^ ]+' /tmp/image-build.log | tail -n 1)
	how="no registry reachable (podman pull: $(tail -n 1 /tmp/pull.log | cut -c1-80)); sagebox image build made $tag"
	args=(--backend podman --image "$tag")
fi
out=$("$SAGEBOX_BIN" run "${args[@]}" --lang sage --json - <<<'R.<x> = QQ[]
print(factor(x^4 - 1))' 2>&1)
if grep -q '(x - 1) \* (x + 1) \* (x^2 + 1)' <<<"$out"; then
	res "PASS Sage as the README advises: $how; sagebox run ${args[*]} --lang sage factored x^4 - 1 ($(($(date +%s) - t0)) s)"
else
	res "FAIL Sage as the README advises: $how; the run said: $(tail -c 400 <<<"$out")"
fi
