"""Podman: IPC left by a warm call is not seen by the
next call on the same worker container (tests/lib/warm_ipc_probe.py)."""

import warm_ipc_probe
from mcpclient import MCP

from conftest import IMAGE, SAGEBOX, as_user_argv


def test_ipc_of_one_warm_call_is_gone_for_the_next():
    with MCP(SAGEBOX, ("--backend", "podman", "--image", IMAGE, "--isolation", "warm"),
             prefix=as_user_argv([])) as mcp:
        warm_ipc_probe.check(mcp)
