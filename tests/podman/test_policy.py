"""The syscall policy table, checked from inside a rootless Podman container:
every refused call gets the table's answer,
exactly as in the native sandbox. The engine's default profile allows
process_vm_readv/writev, pidfd_getfd, name_to_handle_at, mq_*, inotify,
ptrace, keyctl, unshare and mount; sagebox compiles its own table onto it."""
import json
import subprocess

import pytest

import policy_probe

from conftest import SAGEBOX, run_code


def probe(backend_args, **kw):
    pol = policy_probe.policy(SAGEBOX)
    res, p = run_code(policy_probe.probe_code(pol), args=backend_args, **kw)
    assert res is not None and res.get("exit_code") == 0, (p.stdout[-3000:], p.stderr[-3000:])
    return pol, json.loads(res["stdout"].strip().splitlines()[-1])


@pytest.mark.parametrize("isolation", ["warm", "fresh"])
def test_podman_refuses_what_the_policy_table_says(isolation):
    pol, got = probe(["--isolation", isolation])
    assert policy_probe.mismatches(pol, got) == {}


def test_podman_and_native_refuse_the_same_calls_the_same_way():
    pol, in_podman = probe(["--isolation", "fresh"])
    # native, as root (it drops to nobody): the same probe, the same answers
    p = subprocess.run([SAGEBOX, "run", "--backend", "native", "--lang", "python", "-"],
                       input=policy_probe.probe_code(pol), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    in_native = json.loads(p.stdout.strip().splitlines()[-1])
    assert in_podman == in_native


def test_status_names_the_compiled_policy():
    from conftest import status
    st, _ = status()
    assert "syscall policy" in st["backend"]["enforced"]["seccomp"], st["backend"]["enforced"]["seccomp"]
