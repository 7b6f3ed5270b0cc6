# The Debian package's route on a fresh Debian 12 root: scripts/fresh-check
# --deb sources this inside the root, as root, in its clean clone
# /root/sagebox; step NAME LOG COMMAND... is fresh-check's (it records the
# exit status, time and closing line of each).
export DEBIAN_FRONTEND=noninteractive
apt_get() { apt-get -o DPkg::Lock::Timeout=600 -q "$@"; }

lint() {
	apt_get install -y --no-install-recommends lintian >/dev/null || return 1
	# every tag, info and pedantic ones too; debian/sagebox.lintian-overrides
	# says why the one it overrides stays
	lintian -I --pedantic --fail-on error,warning,info,pedantic ../sagebox_*.changes || return 1
	echo "lintian: no tags (info and pedantic included; overrides in debian/sagebox.lintian-overrides)"
}

unit() {
	systemd-analyze verify /lib/systemd/system/sagebox.service || return 1
	XDG_RUNTIME_DIR=$(mktemp -d) systemd-analyze --user verify /usr/lib/systemd/user/sagebox.service || return 1
	getent passwd sagebox || { echo "no user sagebox: the postinst's systemd-sysusers did not make it"; return 1; }
	echo "systemd-analyze verify: both units clean; the user: $(getent passwd sagebox)"
}

# PID 1 here is not systemd (and this host's cgroups are v1), so the unit
# cannot be started: its command runs as its user, with its Environment=,
# StateDirectory= and RuntimeDirectory= made as systemd would, on a port of
# its own (the root shares the host's network), and one MCP call goes to it.
http() {
	local unit=/lib/systemd/system/sagebox.service port=38473 cmd env pid tok sid i h=/tmp/http-headers
	cmd=$(sed -n 's/^ExecStart=//p' $unit | sed "s/127.0.0.1:8080/127.0.0.1:$port/")
	env=$(sed -n 's/^Environment=//p' $unit)
	install -d -o sagebox -g sagebox -m 0700 /var/lib/sagebox /run/sagebox
	# setpriv execs the server itself (runuser would stay its parent and
	# re-raise the SIGTERM, hiding the server's own exit status)
	# shellcheck disable=SC2086  # the unit's words
	setpriv --reuid=sagebox --regid=sagebox --init-groups env -i PATH=/usr/bin:/bin $env $cmd \
		>/mnt/fresh-check/http-server.log 2>&1 &
	pid=$!
	for i in $(seq 100); do [ -s /var/lib/sagebox/token ] && curl -s -o /dev/null "http://127.0.0.1:$port/mcp" && break; sleep 0.2; done
	tok=$(cat /var/lib/sagebox/token) || { kill $pid; cat /mnt/fresh-check/http-server.log; return 1; }
	local H=(-s -H "Authorization: Bearer $tok" -H 'Content-Type: application/json'
		-H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-06-18')
	curl "${H[@]}" -D $h -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"deb-check","version":"1"}}}' \
		"http://127.0.0.1:$port/mcp" >/dev/null
	sid=$(sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *//p' $h | tr -d '\r')
	curl "${H[@]}" -H "Mcp-Session-Id: $sid" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' "http://127.0.0.1:$port/mcp" >/dev/null
	local answer
	answer=$(curl "${H[@]}" -H "Mcp-Session-Id: $sid" -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_python","arguments":{"code":"print(6*7)"}}}' \
		"http://127.0.0.1:$port/mcp" | grep '"id":2')
	kill $pid; wait $pid; local rc=$?
	head -n 2 /mnt/fresh-check/http-server.log
	[[ $answer == *'"text":"42'* ]] || { echo "the call's answer: '$answer'"; return 1; }
	[ $rc = 0 ] || { echo "the server exited $rc on SIGTERM"; return 1; }
	echo "served HTTP as user sagebox (token in /var/lib/sagebox/token): run_python printed 42; exit 0 on SIGTERM"
}

step "apt-get update" apt-update.log apt_get update
step "apt-get build-dep ./" build-dep.log apt_get build-dep -y --no-install-recommends ./
step "dpkg-buildpackage -b -us -uc" build.log dpkg-buildpackage -b -us -uc
step "lintian" lintian.log lint
step "apt-get install the .deb (with its Recommends)" install.log \
	apt_get install -y "$(ls /root/sagebox_*_*.deb | grep -v dbgsym)" man-db bash-completion curl
step "systemd-analyze verify, the user" unit.log unit
step "the system unit's command serves HTTP" http.log http
useradd --create-home --shell /bin/bash fresh-user
step "as a normal user: man, completion, self-test, MCP" user.log \
	runuser -l fresh-user -c 'bash /mnt/fresh-check/deb_user_checks.sh'
