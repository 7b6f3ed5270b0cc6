"""Processes: limits hold, and nothing the code starts outlives the run."""
import json
import os
import signal
import subprocess
import time
import uuid

import pytest

from bombs import FORK_BOMB_PYTHON, FORK_BOMB_SHELL  # tests/lib
from conftest import BIN, host_pids_with, run, run_json
from cpu_busy import BUSY, held_to  # tests/lib (conftest puts it on the path)


def test_fork_bomb_contained():
    t0 = time.time()
    r = run(FORK_BOMB_PYTHON, args=("--pids", "32", "--timeout", "20"))
    n, err = r.out.split()
    assert err == "EAGAIN" and int(n) < 32, r
    assert time.time() - t0 < 15  # the sleeping children died with the sandbox


def test_shell_fork_bomb_contained():
    t0 = time.time()
    r = run(FORK_BOMB_SHELL, lang="shell", args=("--pids", "16", "--timeout", "8"))
    assert time.time() - t0 < 12, r
    # The host is fine: we can still fork here.
    assert subprocess.run(["/bin/true"]).returncode == 0


def test_shell_has_the_signals_of_a_fresh_process():
    """The shell is exec'd by the driver's Python, which ignores SIGPIPE and
    SIGXFSZ for itself; an ignored signal survives execve. With them
    ignored, the writer of `... | head -1` never died: this loop flooded
    "echo: write error: Broken pipe" until the output limit stopped it.
    (A session runs its shell interpreter: the same, through a session.)"""
    code = ("while true; do echo y; done | head -1\n"
            "echo ign=$(awk '/^SigIgn/ {print $2}' /proc/self/status)\n"
            "(ulimit -f 1; head -c 8192 /dev/zero > /tmp/big); echo fsz=$?\n")
    t0 = time.time()
    r = run(code, lang="shell", args=("--timeout", "10"))
    assert r.rc == 0 and time.time() - t0 < 8, r
    lines = r.out.splitlines()
    assert lines[0] == "y" and "Broken pipe" not in r.err, r
    ign = int(lines[1].split("=")[1], 16)
    assert not ign & (1 << (signal.SIGPIPE - 1)) and not ign & (1 << (signal.SIGXFSZ - 1)), r
    # killed by SIGXFSZ past the file-size limit, as in any shell
    assert lines[2] == f"fsz={128 + signal.SIGXFSZ}", r


def test_memory_bomb_killed_host_fine():
    code = r"""
chunks = []
for i in range(64):
    chunks.append(bytearray(16 << 20))  # touched: bytearray zero-fills
print("ALLOCATED 1 GiB")
"""
    res, r = run_json(code, args=("--memory", "256m", "--timeout", "20"))
    assert "ALLOCATED" not in res["stdout"], res
    assert res["exit_code"] != 0
    assert res["signal"] in (9, "SIGKILL") or "MemoryError" in res["stderr"], res


def test_memory_limit_allows_what_it_promises():
    code = "b = bytearray(100 << 20); print('ok', len(b) >> 20)\n"
    r = run(code, args=("--memory", "256m"))
    assert r.out.strip() == "ok 100", r


def test_setsid_double_fork_grandchild_dies_with_run():
    marker = f"{time.time_ns() % 10**9}.{os.getpid()}"
    code = f"""
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["/bin/sleep", "{marker}"])
    os._exit(0)
time.sleep(0.5)
print("parent exits", flush=True)
"""
    r = run(code)
    assert "parent exits" in r.out, r
    time.sleep(0.3)
    assert host_pids_with(marker) == [], "a grandchild survived the sandbox"


def test_timeout_kills_everything():
    marker = f"{time.time_ns() % 10**9}.{os.getpid()}1"
    code = f"""
import os, subprocess
subprocess.Popen(["/bin/sleep", "{marker}"], start_new_session=True)
while True:
    pass
"""
    t0 = time.time()
    r = run(code, args=("--timeout", "2"))
    assert r.rc == 124, r
    assert time.time() - t0 < 10
    time.sleep(0.3)
    assert host_pids_with(marker) == []


def _init_of(pid):
    """Walk up from a sandboxed process to its pid namespace's init."""
    for _ in range(10):
        with open(f"/proc/{pid}/status") as f:
            st = dict(l.split(":", 1) for l in f if ":" in l)
        if st["NSpid"].split()[-1] == "1":
            return pid
        pid = int(st["PPid"])
    raise AssertionError("no init found")


def test_killing_init_from_host_kills_all():
    marker = f"{time.time_ns() % 10**9}.{os.getpid()}2"
    code = f"""
import os, subprocess, time
subprocess.Popen(["/bin/sleep", "{marker}"], start_new_session=True)
subprocess.Popen(["/bin/sleep", "{marker}"])
time.sleep(100)
"""
    p = subprocess.Popen([BIN, "run", "--backend", "native", "--lang", "python", "--timeout", "60", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdin.write(code)
    p.stdin.close()
    try:
        deadline = time.time() + 20
        pids = []
        while time.time() < deadline and len(pids) < 2:
            pids = host_pids_with(marker)
            time.sleep(0.1)
        assert len(pids) == 2, "the sandboxed sleepers never started"
        init = _init_of(pids[0])
        assert init not in pids
        os.kill(init, signal.SIGKILL)
        p.wait(timeout=15)
        assert p.returncode != 0
        time.sleep(0.2)
        assert host_pids_with(marker) == []
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_sandbox_user_not_root_on_host():
    # Seen from the host, every sandboxed process runs as an unprivileged uid.
    marker = f"{time.time_ns() % 10**9}.{os.getpid()}3"
    p = subprocess.Popen([BIN, "run", "--backend", "native", "--lang", "shell", "--timeout", "30", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdin.write(f"/bin/sleep {marker}\n")
    p.stdin.close()
    try:
        deadline = time.time() + 20
        pids = []
        while time.time() < deadline and not pids:
            pids = host_pids_with(marker)
            time.sleep(0.1)
        assert pids
        for pid in pids:
            uids = open(f"/proc/{pid}/status").read().split("Uid:")[1].split("\n")[0].split()
            assert "0" not in uids, uids
            init = _init_of(pid)
            uids = open(f"/proc/{init}/status").read().split("Uid:")[1].split("\n")[0].split()
            assert "0" not in uids, ("init runs as host root", uids)
    finally:
        p.kill()
        p.wait()


def test_cpu_limit_enforced_when_claimed():
    res, r = run_json(BUSY, args=("--cpus", "0.5"))
    enforced_by = res["sandbox"]["cpus"]["enforced_by"]
    p = json.loads(res["stdout"].strip().splitlines()[-1])
    # What the host offers (the same status a user reads): the sandbox must
    # use a cgroup that can hold the CPU share whenever there is one, and
    # say plainly that the limit is not enforced only when there is none.
    st = subprocess.run([BIN, "status", "--json", "--backend", "native"], capture_output=True, text=True,
                        timeout=60)
    would = json.loads(st.stdout)["backend"]["would_enforce"].get("cpus")
    if enforced_by is None:
        assert would is None, ("the host has a cgroup for the CPU share, but the sandbox did not use it",
                               would, res["sandbox"])
        assert "not enforced" in res["sandbox"]["cpus"]["note"], res["sandbox"]["cpus"]
        return
    assert would is not None and enforced_by.startswith("cgroup"), (would, enforced_by)
    assert held_to(p, 0.5), (p, enforced_by)


def test_sandbox_dies_with_its_caller():
    # SIGKILL to sagebox itself (no cleanup code runs): the sandbox must not
    # outlive it.
    marker = f"{time.time_ns() % 10**9}.{os.getpid()}4"
    p = subprocess.Popen([BIN, "run", "--backend", "native", "--lang", "shell", "--timeout", "60", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdin.write(f"setsid /bin/sleep {marker} &\n/bin/sleep {marker}\n")
    p.stdin.close()
    try:
        deadline = time.time() + 20
        while time.time() < deadline and len(host_pids_with(marker)) < 2:
            time.sleep(0.1)
        assert len(host_pids_with(marker)) == 2
        p.kill()
        p.wait()
        deadline = time.time() + 5
        while time.time() < deadline and host_pids_with(marker):
            time.sleep(0.1)
        assert host_pids_with(marker) == []
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def _cgroup_paths(pid, tid):
    """{controller: path} of one host thread (v1 lines; v2's as "unified")."""
    paths = {}
    with open(f"/proc/{pid}/task/{tid}/cgroup") as f:
        for line in f.read().splitlines():
            _, ctrls, path = line.split(":", 2)
            for c in (ctrls.split(",") if ctrls else ["unified"]):
                paths[c] = path
    return paths


def _threads_in_pid_namespace_of(pid):
    """{(pid, tid): _cgroup_paths} of every thread of every host process
    in the pid namespace of pid."""
    ns = os.readlink(f"/proc/{pid}/ns/pid")
    found = {}
    for q in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{q}/ns/pid") != ns:
                continue
            for t in os.listdir(f"/proc/{q}/task"):
                found[(int(q), int(t))] = _cgroup_paths(q, t)
        except OSError:
            continue  # (gone meanwhile)
    return found


def test_every_thread_of_the_sandbox_is_in_its_cgroups():
    # The sandbox's first process moves itself into its cgroups (cgroup v1:
    # through `tasks`, which moves the writing thread alone: cgroup.c
    # SELF_MOVE). Read from the host, every thread of every process in the
    # sandbox's pid namespace (its init, the shell, a program, a thread it
    # starts) must be in the sandbox's cgroup of each controller that
    # claims a limit, not left where sagebox runs.
    marker = f"{time.time_ns() % 10**9}.{os.getpid()}7"
    code = (f"/bin/sleep {marker} &\n"
            f"python3 -c 'import threading, time; threading.Thread(target=time.sleep, args=(30,), daemon=True).start(); "
            f"time.sleep(3)' {marker}\nkill %1\n")
    p = subprocess.Popen([BIN, "run", "--backend", "native", "--lang", "shell", "--json", "--timeout", "60", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdin.write(code)
    p.stdin.close()
    seen = {}
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            pids = host_pids_with(marker)
            py = [q for q in pids if os.path.exists(f"/proc/{q}/task") and len(os.listdir(f"/proc/{q}/task")) >= 2]
            if len(pids) >= 2 and py:
                seen = _threads_in_pid_namespace_of(py[0])
                break
            time.sleep(0.05)
        out, err = p.stdout.read(), p.stderr.read()
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert seen, ("the sandbox's processes were never seen from the host", err)
    res = json.loads(out)
    claimed = {c: res["sandbox"][k].get("enforced_by") or ""
               for c, k in (("memory", "memory"), ("pids", "pids"), ("cpu", "cpus"))}
    if not any(v.startswith("cgroup") for v in claimed.values()):
        pytest.skip(f"no cgroup holds this sandbox: {claimed}")
    # init, sh, sleep and python with its second thread at least
    assert len({pid for pid, _ in seen}) >= 4 and len(seen) >= 5, seen
    for (pid, tid), paths in seen.items():
        for c, by in claimed.items():
            if not by.startswith("cgroup"):
                continue
            where = paths.get(c if by == "cgroup v1" else "unified", "")
            assert "/sagebox." in where, (f"thread {tid} of {pid} is outside the sandbox's {c} cgroup", where, paths)
