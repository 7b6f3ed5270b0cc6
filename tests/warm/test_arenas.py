"""The warm Sage worker's object arenas in huge pages (memory.huge_arenas,
src/worker/huge_arenas.c): what Sage's import allocates sits in a few
2 MiB-aligned mappings advised huge, which each job's fork copies and its
exit tears down at one page-table entry per 2 MiB; status says so per
worker. Checked from inside a job, which has the worker's mappings."""
from conftest import FACTOR, FACTORED, ok, wait_idle
from vmaprobe import VMA_OF

PROBE = VMA_OF + r'''
mine = [[i] for i in range(100000)]   # arenas the job's child carves itself
for what, obj in (("import", QQ.one()), ("import", x), ("job", mine[-1])):
    lo, hi, flags = vma_of(id(obj))
    print(what, lo % (2 << 20) == 0, (hi - lo) >= (2 << 20), "hg" in flags)
'''


def test_the_sage_workers_arenas_are_huge_pages_and_jobs_run_as_before(mcp):
    wait_idle(mcp, "sage")
    assert ok(mcp.run("pass", "python"))  # (a Python worker starts on its first call)
    workers = {w["kind"]: w for w in wait_idle(mcp, "python")["workers"]}
    assert workers["sage"]["object_arenas"] == "huge pages", workers
    assert workers["python"]["object_arenas"] == "CPython's own: not a warm Sage worker", workers
    r = mcp.run(PROBE, "sage")
    assert ok(r), r
    # CPython's own arenas are 1 MiB mappings of their own, never advised
    assert r["stdout"].splitlines() == ["import True True True"] * 2 + ["job True True True"], r
    r = mcp.run(FACTOR, "sage")
    assert ok(r) and r["stdout"].strip() == FACTORED, r
