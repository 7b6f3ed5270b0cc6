"""The syscall policy table (`sagebox policy`), checked from inside the native
sandbox: every refused call gets exactly the table's answer, and the allowed
neighbours of the conditional rows still work. tests/podman/test_policy.py
runs the same probe in a container, so the two backends cannot drift."""
import json

import policy_probe

from conftest import BIN, run


def test_native_refuses_what_the_policy_table_says():
    pol = policy_probe.policy(BIN)
    r = run(policy_probe.probe_code(pol), timeout=120)
    assert r.rc == 0, r
    got = json.loads(r.out.strip().splitlines()[-1])
    assert policy_probe.mismatches(pol, got) == {}


def test_policy_table_names_every_row_with_a_reason():
    pol = policy_probe.policy(BIN)
    names = [n for row in pol["rules"] for n in row["names"]]
    assert len(names) == len(set(names)), "a call is in two rows"
    for row in pol["rules"]:
        assert row["why"] and row["stops"], row
    # the calls Podman's default profile allowed and native did not, and the
    # per-user kernel resources (inotify, fanotify, message queues)
    for n in ("process_vm_readv", "process_vm_writev", "pidfd_getfd", "name_to_handle_at", "mq_open",
              "inotify_init1", "fanotify_init"):
        assert n in names, n
