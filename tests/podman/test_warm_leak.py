"""On Podman too, a warm call cannot read an earlier call's code,
output, files or figures from its own memory (tests/lib/leakprobe.py; the native
version is tests/warm/test_leak.py)."""

from leakprobe import CASES, check_scan, figure_holds, new_secrets, plant, scan_code
from mcpclient import MCP, TOOLS

from conftest import IMAGE, SAGEBOX, as_user_argv


def test_next_call_cannot_read_earlier_calls_from_memory():
    # one server for the three cases: the suite checks after each test
    # that no container of ours is left
    with MCP(SAGEBOX, ("--backend", "podman", "--image", IMAGE, "--isolation", "warm"),
             prefix=as_user_argv([])) as mcp:
        for plant_lang, scan_lang in CASES:
            s = new_secrets(plant_lang[:2].upper())
            full = mcp.call(TOOLS[plant_lang], {"code": plant(plant_lang, s)})
            r = full["structuredContent"]
            assert r.get("exit_code") == 0 and r["stdout"].endswith("planted\n") and s["out"] in r["stdout"], r
            assert plant_lang == "shell" or figure_holds(full, s), r.get("figures")
            w1 = r["sandbox"]["warm"]
            r = mcp.run(scan_code(scan_lang, s), scan_lang, timeout_s=120)
            assert r.get("exit_code") == 0, r
            w2 = r["sandbox"]["warm"]
            assert r["sandbox"]["backend"] == "podman" and w2["worker_jobs"] == w1["worker_jobs"] + 1, (w1, w2)
            found = check_scan(r["stdout"])
            assert found == "[]", f"{plant_lang}: call 2 found call 1's secrets in its memory: {found}"
