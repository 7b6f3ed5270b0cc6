"""a Warm call must not recover any byte of an earlier call's
code, output or files from its own memory. Each job's child is a fork of the
worker; whatever the worker ever held of a job (freed, not cleared) would be
inherited by every later job. Call 1 plants secrets in its code, its output
(stdout and stderr), a file in /tmp (name and contents) and a figure's PNG
(Python and Sage); call 2, on the same worker, reads its whole address space
(/proc/self/maps + /proc/self/mem) and looks for them
(tests/lib/leakprobe.py)."""

import pytest

from conftest import ok

from leakprobe import CASES, check_scan, figure_holds, new_secrets, plant, scan_code
from mcpclient import TOOLS


@pytest.mark.parametrize("plant_lang,scan_lang", CASES)
def test_next_call_cannot_read_earlier_calls_from_memory(healthy, plant_lang, scan_lang):
    s = new_secrets(plant_lang[:2].upper())
    full = healthy.call(TOOLS[plant_lang], {"code": plant(plant_lang, s)})
    r = full["structuredContent"]
    assert ok(r) and r["stdout"].endswith("planted\n") and s["out"] in r["stdout"] and s["err"] in r["stderr"], r
    assert plant_lang == "shell" or figure_holds(full, s), r.get("figures")
    w1 = r["sandbox"]["warm"]
    r = healthy.run(scan_code(scan_lang, s), scan_lang, timeout_s=120)
    assert ok(r), r
    w2 = r["sandbox"]["warm"]
    # the same worker (and so the same heap) served both calls
    assert w2["worker_jobs"] == w1["worker_jobs"] + 1, (w1, w2)
    found = check_scan(r["stdout"])
    assert found == "[]", f"call 2 found call 1's secrets in its memory: {found}"
