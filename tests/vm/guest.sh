#!/bin/bash
# Inside a scripts/vm-check guest, as root, from the host's share at
# /mnt/host: build sagebox from the source there with this release's own
# packages, install it, then run the checks (desktop_checks.py as the normal
# user `desk` in a real login session, unit_checks.py as root, the escape
# battery's native part as desk), each bounded in time, one result line each
# in /mnt/host/results. VM_CHECKS (from /mnt/host/env) narrows the checks.
set -uo pipefail
share=/mnt/host
results=$share/results
# shellcheck disable=SC1091
. /etc/os-release
[ -f $share/env ] && . $share/env
export VM_RESULTS=$results
src=/var/tmp/sagebox
rebooted=/var/lib/sagebox-vm/rebooted # on the guest's own disk: it outlives the reboot
log() { echo "guest: $(date +%T) $*"; }
res() { echo "$*" | tee -a "$results"; }
want() { [ -z "${VM_CHECKS:-}" ] || [[ ",$VM_CHECKS," == *",$1,"* ]]; }
as_desk=(su - desk -c)

# A line a minute on the console, which does not go through the share, and
# in the share: the host tells a guest that is busy in a long check (its
# heartbeat goes on, naming the busiest processes) from one that is wedged
# (no heartbeat: scripts/vm-check stops it and shows the console's tail,
# where the kernel reports a lockup or a task blocked on the share).
heartbeat() {
	local busiest line
	while sleep 55; do
		busiest=$(top -b -n 2 -d 5 -o %CPU -w 200 2>/dev/null | awk '/^top -/ {n++} n == 2 && $1 ~ /^[0-9]+$/ && c++ < 3 {printf "%s %s%%, ", $12, $9}')
		line="heartbeat $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg); busiest: ${busiest%, }"
		echo "sagebox-vm: $line" >/dev/console
		echo "$line" >>$share/heartbeat.log
	done
}
heartbeat &

# --- the boot after the workspaces check's reboot: its second half only ---
if [ -e $rebooted ]; then
	rm -f $rebooted
	log "booted again after the reboot of the workspaces check"
	timeout -k 10 900 "${as_desk[@]}" "cd $src/tests/vm && VM_RESULTS=$results SAGEBOX_BIN=/usr/bin/sagebox python3 workspace_reboot.py after" ||
		[ $? != 124 ] || res "FAIL workspace after a reboot: not done within 900 s"
	log "done"
	exit 0
fi

: >"$results"
chmod 0666 "$results" # the checks as the normal user write it too

log "$PRETTY_NAME, systemd $(systemctl --version | head -n 1 | cut -d' ' -f2), kernel $(uname -r), $(nproc) CPUs"
log "cgroup: $(stat -fc %T /sys/fs/cgroup), root controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"

# --- build and install ---------------------------------------------------
t0=$(date +%s)
rm -rf $src && cp -a $share/src $src && chmod -R a+rX $src
if (cd $src && meson setup /var/tmp/build --prefix=/usr >/var/tmp/build.log 2>&1 &&
	ninja -C /var/tmp/build >>/var/tmp/build.log 2>&1 && meson install -C /var/tmp/build >>/var/tmp/build.log 2>&1); then
	res "PASS build from source: meson + ninja with $ID $VERSION_ID's packages, installed in /usr ($(($(date +%s) - t0)) s)"
else
	tail -n 40 /var/tmp/build.log
	res "FAIL build from source: $(grep -m1 -E "error:|ERROR:" /var/tmp/build.log) ($(($(date +%s) - t0)) s)"
	exit 0
fi
systemd-sysusers >/dev/null && systemctl daemon-reload

# A login of the normal user through PAM (pam_systemd: a session of its
# own, user@UID.service, the session bus), as a desktop login would: as_desk.
in_vm="cd $src/tests/vm && VM_RESULTS=$results SAGEBOX_BIN=/usr/bin/sagebox"
bounded() { # seconds name command...: a check that did not end in time is a failure
	local secs=$1 name=$2; shift 2
	timeout -k 10 "$secs" "$@"
	local rc=$?
	[ $rc = 124 ] || [ $rc = 137 ] && res "FAIL $name: not done within $secs s"
	return 0
}

# --- as the normal user, in a login session -------------------------------
if want desktop; then
	bounded 2400 "desktop checks" "${as_desk[@]}" "$in_vm python3 desktop_checks.py ${VM_DESKTOP:-}"
fi

# --- the system unit, as root --------------------------------------------
if want units; then
	(cd $src/tests/vm && bounded 900 "unit checks" python3 unit_checks.py)
fi

# --- the escape battery's native part (no Sage), as the normal user -------
if want escape; then
	t0=$(date +%s)
	out=$(timeout -k 10 3600 "${as_desk[@]}" "cd $src && SAGEBOX_BIN=/usr/bin/sagebox python3 -m pytest -q -p no:cacheprovider \
		-rfE tests/sandbox --ignore=tests/sandbox/test_sage.py --ignore=tests/sandbox/test_sage_where.py" 2>&1)
	rc=$?
	echo "$out" | tail -n 40
	last=$(echo "$out" | grep -E '(passed|failed|error)' | tail -n 1)
	[ $rc = 0 ] && res "PASS escape battery, native part (tests/sandbox without Sage, as desk): $last ($(($(date +%s) - t0)) s)" ||
		res "FAIL escape battery, native part: exit $rc: $last $(echo "$out" | grep -m3 '^FAILED') ($(($(date +%s) - t0)) s)"
fi

# --- Sage on a release without it: the README's advice, as written --------
if want sage-advice && [ ! -x /usr/bin/sage ]; then
	# docs/USER.md's "Rootless Podman, once per machine", as root: the
	# packages are in the image; the user's subordinate ids are not (useradd
	# gave desk none).
	grep -q '^desk:' /etc/subuid || usermod --add-subuids 100000-165535 --add-subgids 100000-165535 desk
	bounded 5400 "Sage as the README advises" "${as_desk[@]}" "$in_vm bash sage_advice.sh"
fi
# --- a named workspace across a reboot (last: it reboots the guest) ------
# The guest's sagebox-vm unit runs this script again on the next boot, which
# finds $rebooted and checks the workspace (above).
if want workspaces; then
	if timeout -k 10 900 "${as_desk[@]}" "$in_vm python3 workspace_reboot.py before"; then
		if pgrep -u desk -f "sagebox mcp" >/dev/null; then
			res "PASS reboot with a workspace session open: sagebox mcp still running with the session open as the guest reboots"
		else
			res "FAIL reboot with a workspace session open: sagebox mcp was gone before the reboot (ended with the login session?)"
		fi
		mkdir -p "$(dirname $rebooted)" && touch $rebooted && sync
		log "rebooting (systemctl reboot)"
		cp $share/guest.log $share/guest-before-reboot.log
		touch $share/reboot # the host boots the guest again (qemu -no-reboot)
		systemctl reboot
		sleep infinity # the reboot stops this unit
	fi
fi
log "done"
