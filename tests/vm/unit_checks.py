"""The system unit started for real (root, in a scripts/vm-check guest):
`systemctl start sagebox` serves MCP over HTTP with its token as the user
sagebox, runs a call in a sandbox whose limits its delegated cgroup holds,
with the unit's hardening in effect; `systemd-analyze security` says how
exposed it is; `systemctl stop` leaves no process, cgroup or socket;
whether the setuid newuidmap rootless Podman needs gains root in the unit,
as its comment says of each systemd."""
import os
import re
import sys

from vmlib import CG, Mcp, check, listening, sh, wait_for, wait_token

URL = "http://127.0.0.1:8080/mcp"
HAVE_SAGE = os.path.exists("/usr/bin/sage")


def mounts_of(pid):
    """{mount point: options} of a process's mount namespace (the last
    mount on a point is the one seen)."""
    out = {}
    for line in open(f"/proc/{pid}/mountinfo"):
        f = line.split()
        out[f[4]] = f[5]
    return out


def opts_at(mnt, path):
    """The options of the mount that holds path."""
    best = max((m for m in mnt if path == m or path.startswith(m.rstrip("/") + "/")), key=len)
    return mnt[best]


def sagebox_pids():
    uid = int(sh("id", "-u", "sagebox").stdout)
    found = []
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{p}").st_uid == uid:
                found.append(int(p))
        except OSError:
            pass
    return found


@check("systemctl start sagebox (system unit)")
def system_unit():
    sh("systemctl", "start", "sagebox")
    tok = wait_token("/var/lib/sagebox/token", URL, 180)
    m = Mcp(URL, tok)
    m.initialize()
    if HAVE_SAGE:
        out = m.call("run_sagemath", code="R.<x> = QQ[]\nprint(factor(x^4 - 1))")
        assert "(x - 1) * (x + 1) * (x^2 + 1)" in out, out
        said = "run_sagemath factored x^4 - 1"
    else:
        out = m.call("run_python", code="print(6*7)")
        assert "42" in out, out
        said = "run_python printed 42 (no Sage in this release)"
    st = m.call("sandbox_status")
    # memory total, processes and cpus by the delegated cgroup; what else is
    # not enforced (no Sage in Debian 13) is not the unit's
    enforced, _, rest = st.partition("\nNot enforced:")
    not_enforced = rest.partition("\nDetails:")[0]
    for what in ("memory", "processes", "cpus"):
        assert re.search(rf"^  {what} .*by cgroup v2", enforced, re.M), f"{what} not by cgroup v2: {st}"
    assert not re.search(r"^  (memory total|processes|cpus) ", not_enforced, re.M), st
    pid = int(sh("systemctl", "show", "-p", "MainPID", "--value", "sagebox").stdout)
    cg = sh("systemctl", "show", "-p", "ControlGroup", "--value", "sagebox").stdout.strip()
    sandboxes = [d for d in os.listdir(f"{CG}{cg}") if d.startswith("sagebox")]
    # the hardening, seen from its process
    mnt = mounts_of(pid)
    user = open(f"/proc/{pid}/status").read()
    uid = re.search(r"^Uid:\s+(\d+)", user, re.M).group(1)
    assert uid != "0", "runs as root"
    assert opts_at(mnt, "/usr").startswith("ro") and opts_at(mnt, "/etc").startswith("ro"), "ProtectSystem"
    assert "/home" in mnt, "ProtectHome: no mount over /home"
    assert not os.listdir(f"/proc/{pid}/root/home"), "ProtectHome: /home is visible"
    assert "/tmp" in mnt, "PrivateTmp: no mount over /tmp"
    # Nothing mounted inside /proc but on its permanently empty
    # binfmt_misc directory: else the kernel refuses the sandbox its own.
    in_proc = [m for m in mnt if m.startswith("/proc/") and m != "/proc/sys/fs/binfmt_misc"]
    assert not in_proc, f"mounts inside /proc: {in_proc}"
    assert "/dev/kmsg" in mnt, "InaccessiblePaths=-/dev/kmsg: no mount over /dev/kmsg"
    capbnd = int(re.search(r"^CapBnd:\s+([0-9a-f]+)", user, re.M).group(1), 16)
    assert not capbnd & (1 << 34), "CAP_SYSLOG is in the bounding set"
    # Every process but the server in a sandbox's cgroup: none left
    # unlimited beside it (a warm worker made at start included).
    def loose():
        found = []
        for p in sagebox_pids():
            try:
                where = open(f"/proc/{p}/cgroup").read().strip()
            except OSError:
                continue
            if p != pid and not re.search(r"/sagebox\.\d+\.", where):
                found.append(f"{p} in {where}")
        return found
    wait_for(lambda: not loose(), 30)
    assert not loose(), f"processes of the unit outside any sandbox's cgroup: {loose()}"
    return (f"{said}; sandbox_status: limits by cgroup v2 in {cg} ({sandboxes}), every sandbox process in one; "
            f"runs as uid {uid}; "
            f"/usr and /etc read-only, /home empty, /tmp private, nothing mounted inside /proc, "
            f"/dev/kmsg hidden, no CAP_SYSLOG")


@check("systemd-analyze security sagebox")
def security():
    p = sh("systemd-analyze", "security", "--no-pager", "sagebox", check_rc=False)
    print(p.stdout)
    overall = [l for l in p.stdout.splitlines() if "Overall exposure level" in l]
    assert overall, p.stdout[-500:] + p.stderr[-500:]
    return overall[0].strip()


@check("systemctl stop sagebox leaves nothing")
def stop():
    cg = sh("systemctl", "show", "-p", "ControlGroup", "--value", "sagebox").stdout.strip()
    sh("systemctl", "stop", "sagebox")
    state = sh("systemctl", "show", "-p", "ActiveState,Result", "sagebox").stdout.split()
    assert "ActiveState=inactive" in state and "Result=success" in state, state
    assert wait_for(lambda: not sagebox_pids(), 10), f"processes of user sagebox left: {sagebox_pids()}"
    assert not cg or not os.path.exists(f"{CG}{cg}"), f"{CG}{cg} left"
    assert not listening(8080), "port 8080 still listening"
    return f"{' '.join(state)}; no process of user sagebox, no {cg or 'cgroup'}, nothing on port 8080"


PROBE = "/run/systemd/system/sagebox.service.d/vm-check-probe.conf"
PROBE_OUT = "/run/sagebox-vm-probe.txt"


@check("setuid newuidmap in the unit (rootless Podman)")
def setuid_in_unit():
    """The unit leaves out NoNewPrivileges= for rootless Podman, whose
    setuid newuidmap maps the user's subordinate ids: the unit itself, its
    ExecStart replaced by a drop-in, reads its no_new_privs and, where
    Podman is installed, maps the ids with `podman unshare`; whether it can
    depends on systemd (setuid_verdict)."""
    podman = os.path.exists("/usr/bin/podman") and os.path.exists("/usr/bin/newuidmap")
    if podman:
        sh("usermod", "--add-subuids", "300000-365535", "--add-subgids", "300000-365535", "sagebox")
    cmd = "grep NoNewPrivs /proc/self/status"
    if podman:
        cmd += "; podman unshare cat /proc/self/uid_map"
    os.makedirs(os.path.dirname(PROBE), exist_ok=True)
    with open(PROBE, "w") as f:
        f.write(f"[Service]\nExecStart=\nExecStart=/bin/sh -c '{cmd}'\nRestart=no\n"
                f"StandardOutput=truncate:{PROBE_OUT}\nStandardError=journal\n")
    try:
        sh("systemctl", "daemon-reload")
        sh("systemctl", "start", "sagebox")
        assert wait_for(lambda: sh("systemctl", "is-active", "sagebox", check_rc=False).stdout.strip()
                        in ("inactive", "failed"), 120), "the probe did not end"
        out = open(PROBE_OUT).read()
    finally:
        os.unlink(PROBE)
        sh("systemctl", "daemon-reload")
        sh("systemctl", "reset-failed", "sagebox", check_rc=False)
        if podman:
            sh("usermod", "--del-subuids", "300000-365535", "--del-subgids", "300000-365535", "sagebox")
    return setuid_verdict(out, systemd_version(), podman)


def systemd_version():
    return int(re.match(r"systemd (\d+)", sh("systemctl", "--version").stdout).group(1))


def setuid_verdict(out, version, podman):
    """What the unit's comment says of each systemd: 252 (Debian 12) sets
    no_new_privs for it (its options imply NoNewPrivileges=yes), 257
    (Debian 13) does not, and there newuidmap maps the ids."""
    nnp = re.search(r"^NoNewPrivs:\s+(\d)", out, re.M)
    assert nnp, out
    nnp = nnp.group(1)
    if version <= 252:
        assert nnp == "1", f"systemd {version}: no_new_privs unset in the unit, which its comment says it sets: {out}"
        return f"systemd {version}: NoNewPrivs 1 in the unit: a setuid newuidmap gains nothing, rootless Podman maps no ids"
    if version >= 257:
        assert nnp == "0", f"systemd {version}: no_new_privs set in the unit, which its comment says it leaves unset: {out}"
    if not podman:
        return f"systemd {version}: NoNewPrivs {nnp} in the unit (no Podman in this guest to map ids with)"
    mapped = re.search(r"^\s*1\s+300000\s+65536\s*$", out, re.M)
    assert mapped or nnp == "1", f"systemd {version}: NoNewPrivs 0, yet podman unshare mapped no subordinate ids: {out}"
    return (f"systemd {version}: NoNewPrivs {nnp} in the unit; podman unshare there "
            + ("mapped 1 -> 300000 (65536) through the setuid newuidmap" if mapped else "mapped no ids"))


CHECKS = [system_unit, security, stop, setuid_in_unit]

if __name__ == "__main__":
    want = sys.argv[1:]
    for c in CHECKS:
        if not want or c.check_name in want or c.__name__ in want:
            c()
