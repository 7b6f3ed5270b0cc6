"""Who the code is inside: an unprivileged uid mapped from an unprivileged
host uid, no capabilities, no_new_privs, seccomp, a clean environment."""
import os

from conftest import VIA_SESSION, run, run_json

PROBE = r"""
import json, os
st = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
print(json.dumps({
    "uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "groups": os.getgroups(),
    "uid_map": open("/proc/self/uid_map").read().split(),
    "gid_map": open("/proc/self/gid_map").read().split(),
    "setgroups": open("/proc/self/setgroups").read().strip(),
    "caps": {k: st[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")},
    "nnp": st["NoNewPrivs"].strip(), "seccomp": st["Seccomp"].strip(),
    "sid_is_self": os.getsid(0) == os.getpid() or os.getsid(0) != os.getsid(1),
}))
"""


def test_unprivileged_uid_mapped_from_unprivileged_host_uid():
    p = run(PROBE).json()
    assert p["uid"] == p["euid"] == 1000 and p["gid"] == 1000
    inside, outside, count = p["uid_map"]
    assert inside == "1000" and count == "1", p["uid_map"]
    # Started as root, the sandbox must still map a NON-root host uid.
    assert outside != "0", "host root is mapped into the sandbox"
    if os.geteuid() != 0:
        assert outside == str(os.geteuid())
    assert p["gid_map"][1] != "0"
    assert p["setgroups"] == "deny"


def test_no_capabilities_nnp_seccomp():
    p = run(PROBE).json()
    assert all(v == "0000000000000000" for v in p["caps"].values()), p["caps"]
    assert p["nnp"] == "1"
    assert p["seccomp"] == "2"


def test_cannot_become_root():
    code = r"""
import os
for f in (lambda: os.setuid(0), lambda: os.setresuid(0, 0, 0), lambda: os.setgid(0), lambda: os.setgroups([0])):
    try:
        f(); print("ESCALATED")
    except OSError:  # EPERM, or EINVAL: uid 0 does not even exist here
        print("denied")
print(os.getuid())
"""
    r = run(code)
    assert "ESCALATED" not in r.out and r.out.count("denied") == 4, r


def test_setuid_binaries_do_not_elevate():
    code = r"""
import os, subprocess, time, json
f = os.statvfs("/usr").f_flag
seen = set()
p = subprocess.Popen(["/usr/bin/su", "-c", "id"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
for _ in range(100):
    try:
        for l in open(f"/proc/{p.pid}/status"):
            if l.startswith("Uid:"):
                seen.add(l.split()[2])  # effective uid
    except OSError:
        break
    if p.poll() is not None:
        break
    time.sleep(0.01)
p.kill(); out, err = p.communicate()
print(json.dumps({"nosuid": bool(f & os.ST_NOSUID), "rdonly": bool(f & os.ST_RDONLY),
                  "euids": sorted(seen), "out": out.decode()}))
"""
    p = run(code).json()
    assert p["nosuid"] and p["rdonly"]
    assert "0" not in p["euids"], p
    assert "uid=0" not in p["out"]


def test_environment_has_no_host_secret():
    secret = "sagebox-secret-7f3a9c"
    code = r"""
import os, json
env = dict(os.environ)
raw = open("/proc/self/environ", "rb").read().decode(errors="replace")
print(json.dumps({"env": env, "raw": raw}))
"""
    p = run(code, env={"SAGEBOX_TEST_SECRET": secret, "OPENAI_API_KEY": "sk-" + secret,
                       "ANTHROPIC_API_KEY": secret, "GITHUB_TOKEN": secret}).json()
    assert "SAGEBOX_TEST_SECRET" not in p["env"] and "OPENAI_API_KEY" not in p["env"]
    assert secret not in p["raw"] and secret not in repr(p["env"])
    assert p["env"]["HOME"] == "/tmp/home"


def test_enforced_report_is_verified_and_honest():
    res, r = run_json("print(1)")
    sb = res["sandbox"]
    assert sb["backend"] == "native"
    assert sb["seccomp"] == "enforced" and sb["no_new_privs"] is True and sb["capabilities"] == "none"
    assert sb["uid_inside"] == 1000 and sb["host_uid"] != 0
    assert sb["network"].startswith("loopback only")  # (with network set: and the relay's port)
    assert set(sb["namespaces"]) == {"user", "mount", "pid", "net", "ipc", "uts", "cgroup"}
    for k in ("memory", "pids", "cpus"):
        assert "enforced_by" in sb[k]
        if sb[k]["enforced_by"] is None:
            assert "note" in sb[k]


def test_only_stdio_descriptors_inherited():
    r = run("import os, sys\nfig = sys.modules['sagebox_driver.items']._out\nprint(fig.fd)\n"
            "for fd in sorted(os.listdir('/proc/self/fd'), key=int):\n"
            "    try: print(fd, os.readlink('/proc/self/fd/' + fd), open('/proc/self/fdinfo/' + fd).read().split()[3])\n"
            "    except OSError: print(fd, '-', 0)\n")
    fig, *lines = r.out.splitlines()
    fds = {fd: (what, int(flags, 8)) for fd, what, flags in (line.split(" ") for line in lines)}
    # 0 1 2, the descriptor listdir itself opened (closed by now: '-'), and
    # the job's own display pipe, close-on-exec: no program it runs inherits
    # it (docs/WARM.md, "Figures")
    assert fds[fig][0].startswith("pipe:") and fds[fig][1] & os.O_CLOEXEC, r
    assert sum(what == "-" for what, _ in fds.values()) <= 1, r
    extra = {fd: what for fd, (what, _) in fds.items() if fd not in {"0", "1", "2", fig} and what != "-"}
    if VIA_SESSION:
        # a session's interpreter keeps its own request and status pipes
        # to its controller, and /dev/null (close-on-exec, all three)
        assert len(extra) <= 3 and all(w.startswith("pipe:") or w == "/dev/null" for w in extra.values()), r
    else:
        assert not extra, r
