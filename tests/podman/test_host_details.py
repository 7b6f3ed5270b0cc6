"""Issue 13, finding 8: a container must not show the code more of the host
than the native sandbox does: no host /sys, no kernel symbols, no host cgroup
path, no host /etc/hosts entries, no host-chosen hostname."""
import json
import subprocess

from conftest import SAGEBOX, run_code

LOOK = r"""
import json, os
def read(p):
    try:
        with open(p, errors="replace") as f:
            return f.read()
    except OSError as e:
        return "error: " + e.strerror
r = {"sys": sorted(os.listdir("/sys")) if os.path.isdir("/sys") else [],
     "kallsyms": read("/proc/kallsyms")[:200],
     "cgroup_paths": sorted({l.split(":", 2)[2].strip() for l in read("/proc/self/cgroup").splitlines() if l}),
     "hostname": os.uname().nodename,
     "hosts": read("/etc/hosts")}
print(json.dumps(r))
"""


def look_native():
    p = subprocess.run([SAGEBOX, "run", "--backend", "native", "--lang", "python", "-"], input=LOOK,
                       capture_output=True, text=True, timeout=120)
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_podman_shows_no_more_of_the_host_than_native():
    res, p = run_code(LOOK, args=["--isolation", "fresh"])
    assert res and res["exit_code"] == 0, p.stderr
    pm = json.loads(res["stdout"].strip().splitlines()[-1])
    native = look_native()
    assert pm["sys"] == [] and native["sys"] == []
    assert pm["kallsyms"] in ("", ) or pm["kallsyms"].startswith("error"), pm["kallsyms"]
    assert native["kallsyms"] in ("", ) or native["kallsyms"].startswith("error"), native["kallsyms"]
    assert pm["cgroup_paths"] == ["/"] == native["cgroup_paths"], (pm["cgroup_paths"], native["cgroup_paths"])
    assert pm["hostname"] == native["hostname"] == "sagebox"
    # no host entries (the host's own names, podman's host.containers.internal)
    for name in ("host.containers.internal", "vm", "runsc", "sagebox-"):
        assert name not in pm["hosts"].split(), pm["hosts"]


def test_what_stays_visible_is_said():
    res, _ = run_code("print(1)", args=["--isolation", "fresh", "--json"] if False else ["--isolation", "fresh"])
    hd = res["sandbox"]["host_details"]
    assert any("mountinfo" in v for v in hd["visible"]), hd
    assert "/sys (an empty tmpfs)" in hd["hidden"]
