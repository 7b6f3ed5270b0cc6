"""a Container must not show the code more of the host
than the native sandbox does: no host /sys, no kernel symbols, no host cgroup
path, no host /etc/hosts entries, no host-chosen hostname."""
import json
import os
import re
import subprocess

import pytest

from conftest import NET_MOUNT, NETWORK, SAGEBOX, as_user, run_code, user_info


def unescape(field):
    """A mountinfo path field: the kernel writes space, tab, newline and
    backslash as octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


HOST_DIRS = ("/home", "/root", "/run", "/tmp", "/var", "/work", "/srv", "/opt")


def on_host(dev, root, host_mountinfo):
    """Where a mount of filesystem DEV (major:minor) from ROOT (a path
    within that filesystem) is on the host: each host mount of the same
    filesystem whose own root holds ROOT, as a path. A root is named within
    its filesystem, not from /: on a host whose /tmp is a tmpfs of its own
    (Debian 13, Fedora, Arch) /tmp/x shows as "/x", and only the device
    says it is the host's /tmp. Empty for the container's own filesystems
    (its overlay, tmpfs, proc), which the host has not mounted. Where the
    host shows it through several mounts (a chroot's bind of /dev), the one
    mounted first (lowest id) names it: the system's own, not a later copy."""
    found = []
    for line in host_mountinfo.splitlines():
        f = line.split()
        if len(f) < 10 or f[2] != dev:
            continue
        mroot, point = unescape(f[3]), unescape(f[4])
        if root == mroot or root.startswith(mroot.rstrip("/") + "/"):
            found.append((int(f[0]), os.path.normpath(os.path.join(point, os.path.relpath(root, mroot)))))
    return [min(found)[1]] if found else []


def host_paths(mountinfo, host_mountinfo):
    """The host directories a mount table shows: the roots of its mounts
    that are host directories, as host paths (on_host), or, where the host
    does not show the filesystem, as the kernel names them; and the paths
    in overlay options (as the mounting namespace named them)."""
    paths, roots, opts = set(), set(), set()
    for line in mountinfo.splitlines():
        f = line.split()
        if len(f) < 10:
            continue
        root = unescape(f[3])
        where = on_host(f[2], root, host_mountinfo)
        paths.update(p for p in where if p.startswith(HOST_DIRS))
        if not where and root.startswith(HOST_DIRS):
            roots.add(root)
        for opt in f[-1].split(","):
            k, _, v = opt.partition("=")
            if k in ("lowerdir", "upperdir", "workdir"):
                opts.update(v.split(":"))
    return paths, roots, opts


def kernel_name(path, mountinfo):
    """PATH as a mount table's root field names it: relative to the root of
    the filesystem it is on, through the mount that holds it in MOUNTINFO.
    On a machine whose / is its filesystem's root that is PATH itself; on a
    root that is a directory of a larger filesystem (scripts/fresh-check's
    /var/tmp/sagebox-fresh.X/root) it is that directory joined with PATH."""
    best = None
    for line in mountinfo.splitlines():
        f = line.split()
        if len(f) < 10:
            continue
        point = unescape(f[4])
        if path == point or path.startswith(point.rstrip("/") + "/"):
            if best is None or len(point) > len(best[0]):
                best = (point, unescape(f[3]))
    assert best, f"no mount holds {path}"
    point, root = best
    name = os.path.normpath(os.path.join(root, os.path.relpath(path, point)))
    return name + "/" if path.endswith("/") else name


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
     "hosts": read("/etc/hosts"),
     "mountinfo": read("/proc/self/mountinfo")}
print(json.dumps(r))
"""


def look_native():
    p = subprocess.run([SAGEBOX, "run", "--backend", "native", "--lang", "python", "-"], input=LOOK,
                       capture_output=True, text=True, timeout=120)
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("isolation", ["warm", "fresh"])
def test_podman_shows_no_more_of_the_host_than_native(isolation):
    res, p = run_code(LOOK, args=["--isolation", isolation])
    assert res and res["exit_code"] == 0, p.stderr
    pm = json.loads(res["stdout"].strip().splitlines()[-1])
    native = look_native()
    assert pm["sys"] == [] and native["sys"] == []
    assert pm["kallsyms"] in ("", ) or pm["kallsyms"].startswith("error"), pm["kallsyms"]
    assert native["kallsyms"] in ("", ) or native["kallsyms"].startswith("error"), native["kallsyms"]
    # Each sees only its own cgroup namespace: its root and, for a native
    # warm or fresh job, the job cgroup that holds it to `cpus`
    # (src/sandbox/native/cgroup.c JOB_CGROUP: "/job" on cgroup v1; on v2
    # the namespace's root is the sandbox's leaf beside it, "/../job").
    assert pm["cgroup_paths"] == ["/"], pm["cgroup_paths"]
    assert "/" in native["cgroup_paths"] or "/../job" in native["cgroup_paths"], native["cgroup_paths"]
    assert set(native["cgroup_paths"]) <= {"/", "/job", "/../job"}, native["cgroup_paths"]
    assert pm["hostname"] == native["hostname"] == "sagebox"
    # no host entries (the host's own names, podman's host.containers.internal)
    for name in ("host.containers.internal", "vm", "runsc", "sagebox-"):
        assert name not in pm["hosts"].split(), pm["hosts"]
    # what the mount table still shows of the host (said in host_details,
    # docs/PODMAN.md) is podman's own storage of this user, nothing else:
    # no other home, no checkout, no host /tmp
    # podman's storage: overlay options name it as the test user sees it,
    # mount roots as the kernel does (the same on a machine whose / is its
    # filesystem's root; under that directory where / is a directory of a
    # larger filesystem).
    uid, home = user_info()
    # and the user's packages directory, bound read-only when it exists
    # (`sagebox mcp` makes it; src/packages/packages.h), as host_details says
    allowed = (home + "/.local/share/containers/", f"/run/user/{uid}/containers/",
               home + "/.local/share/sagebox/site-packages")
    users_mounts = as_user(["cat", "/proc/self/mountinfo"], check=True).stdout.decode()
    allowed_roots = tuple(kernel_name(a, users_mounts) for a in allowed)
    # with a network list (the podman-network suite): the sandbox's own
    # proxy socket directory, bound read-only at /run/sagebox-net, shows its
    # host path (TMPDIR/sagebox-net-XXXXXX/ID, said in host_details), and
    # only that directory, not one above it
    lines = pm["mountinfo"].splitlines()
    net = [f for f in (l.split() for l in lines) if len(f) > 4 and f[4] == NET_MOUNT]
    if NETWORK:
        where = on_host(net[0][2], unescape(net[0][3]), users_mounts) if len(net) == 1 else []
        assert len(where) == 1 and re.fullmatch(r"/\S*/sagebox-net-\w{6}/[0-9]+", where[0]), (net, where)
        assert "ro" in net[0][5].split(","), net
    assert len(net) == NETWORK, net
    paths, roots, opts = host_paths("\n".join(l for l in lines if l.split()[4:5] != [NET_MOUNT]), users_mounts)
    stray = sorted(p for p in paths if not p.startswith(allowed)) + \
        sorted(p for p in roots if not p.startswith(allowed_roots)) + \
        sorted(p for p in opts if not p.startswith(allowed))
    assert stray == [], (stray, allowed_roots)


def test_what_stays_visible_is_said():
    res, _ = run_code("print(1)", args=["--isolation", "fresh"])
    hd = res["sandbox"]["host_details"]
    assert any("mountinfo" in v for v in hd["visible"]), hd
    assert "/sys (an empty tmpfs)" in hd["hidden"]
    # with a network list, the host path of the proxy socket directory too
    assert any("sagebox-net-" in v and NET_MOUNT in v for v in hd["visible"]) == NETWORK, hd
    assert res["sandbox"]["host_mounts"].startswith(f"its proxy socket directory at {NET_MOUNT}") == NETWORK, res
