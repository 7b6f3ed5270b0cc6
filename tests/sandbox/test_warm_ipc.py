"""Native: IPC left by a warm call is not seen by the
next call on the same worker (tests/lib/warm_ipc_probe.py)."""

import warm_ipc_probe
from mcpclient import MCP

from conftest import BIN


def test_ipc_of_one_warm_call_is_gone_for_the_next():
    with MCP(BIN, ("--backend", "native", "--isolation", "warm")) as mcp:
        warm_ipc_probe.check(mcp)
