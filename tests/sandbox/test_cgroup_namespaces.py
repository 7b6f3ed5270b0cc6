"""Two sagebox processes in different pid namespaces share the cgroup
directories (a container, scripts/fresh-check's root). Each cleans up the
cgroups of sageboxes that died without a word by asking whether their pid is
gone; a pid of another namespace means nothing here, so one sagebox used to
remove the other's idle job cgroups, and its next job failed with "could
not join the cgroup that holds each job to the cpus limit". Found by
scripts/fresh-check."""
import glob
import os
import subprocess
import time

import pytest

from conftest import BIN, VIA_SESSION


def free_pid():
    """A pid the host has not in use, with the next two free too."""
    pid_max = int(open("/proc/sys/kernel/pid_max").read())
    for cand in range(pid_max - 200, 300, -97):
        if not any(os.path.exists(f"/proc/{p}") for p in (cand, cand + 1, cand + 2)):
            return cand
    pytest.skip("no free pid on this host")


def dirs_of(pid):
    return sorted(glob.glob(f"/sys/fs/cgroup/*/sagebox.{pid}.*") + glob.glob(f"/sys/fs/cgroup/*/sagebox.{pid}.*/*/"))


@pytest.mark.skipif(os.geteuid() != 0 or VIA_SESSION, reason="needs root (a pid namespace, cgroup v1 as root)")
def test_a_sagebox_in_another_pid_namespace_keeps_its_cgroups():
    last = free_pid()
    inner = last + 1
    # sh sets the namespace's next pid, then forks sagebox as pid `inner`,
    # which the host does not have.
    p = subprocess.Popen(
        ["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c",
         f'echo {last} > /proc/sys/kernel/ns_last_pid; "$0" mcp', BIN],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        before = []
        while time.monotonic() < deadline:
            before = dirs_of(inner)
            if any(d.rstrip("/").endswith("/job") for d in before):
                break
            time.sleep(0.2)
        if not before:
            pytest.skip("the namespaced sagebox made no cgroup (no writable cgroup here)")
        assert any(d.rstrip("/").endswith("/job") for d in before), f"no idle job cgroup appeared: {before}"
        # The host's sagebox cleans up stale cgroups as it makes its own.
        r = subprocess.run([BIN, "run", "--backend", "native", "--lang", "python", "-"], input="print(6*7)",
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and "42" in r.stdout, r
        after = dirs_of(inner)
        assert after == before, f"the host's sagebox removed the other namespace's cgroups: {set(before) - set(after)}"
    finally:
        p.stdin.close()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
