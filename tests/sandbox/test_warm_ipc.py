"""Issue 13, finding 3 (native): IPC left by a warm call is not seen by the
next call on the same worker (tests/lib/warm_ipc_probe.py)."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "lib"))
sys.path.insert(0, os.path.join(here, "..", "warm"))
import warm_ipc_probe  # noqa: E402
from mcpclient import MCP  # noqa: E402

from conftest import BIN  # noqa: E402


def test_ipc_of_one_warm_call_is_gone_for_the_next():
    with MCP(BIN, ("--backend", "native", "--isolation", "warm")) as mcp:
        warm_ipc_probe.check(mcp)
