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
    # a call is in one row, and in one more only where that row refines
    # another (socket: the netlink protocols, for AF_NETLINK alone)
    plain = [n for row in pol["rules"] if "only_where" not in row for n in row["names"]]
    assert len(plain) == len(set(plain)), "a call is in two rows"
    for row in pol["rules"]:
        if "only_where" in row:
            g = row["only_where"]
            assert row["when"] == "unless equal to one of the values", row
            assert all(any(n in r["names"] and r.get("arg") == g["arg"] and g["equals"] in r["values"]
                           for r in pol["rules"] if "only_where" not in r) for n in row["names"]), row
    for row in pol["rules"]:
        assert row["why"] and row["stops"], row
    # the calls Podman's default profile allowed and native did not, and the
    # per-user kernel resources (inotify, fanotify, message queues)
    for n in ("process_vm_readv", "process_vm_writev", "pidfd_getfd", "name_to_handle_at", "mq_open",
              "inotify_init1", "fanotify_init"):
        assert n in names, n
    # socket families: an allow-list, not a list of the known bad ones
    fam = [r for r in pol["rules"] if "socket" in r["names"] and "only_where" not in r]
    assert len(fam) == 1 and "socketpair" in fam[0]["names"], fam
    assert fam[0]["when"] == "unless equal to one of the values" and fam[0]["arg"] == 0, fam
    assert sorted(fam[0]["values"]) == [1, 2, 10, 16], fam  # AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
    assert fam[0]["errno"] == "EAFNOSUPPORT" and "AF_VSOCK" in fam[0]["stops"], fam
    nl = [r for r in pol["rules"] if r.get("only_where") == {"arg": 0, "equals": 16}]
    assert len(nl) == 1 and nl[0]["names"] == ["socket"] and nl[0]["arg"] == 2 and nl[0]["values"] == [0], nl
