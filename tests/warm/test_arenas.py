"""The warm Sage worker's object arenas in huge pages (memory.huge_arenas,
src/worker/huge_arenas.c): what Sage's import allocates sits in a few
2 MiB-aligned mappings advised huge, which each job's fork copies and its
exit tears down at one page-table entry per 2 MiB; status says so per
worker. Checked from inside a job, which has the worker's mappings.

Counted over all the objects, not asked of one: an object the import makes
may reuse a free block of an arena CPython mapped before the allocator was
installed (Python's own start-up), and which one does varies with the
worker's hash seed; about 92 % of the import's objects are in huge
mappings, about 0 % with CPython's own arenas."""
from conftest import FACTOR, FACTORED, ok, wait_idle
from vmaprobe import VMA_OF

PROBE = VMA_OF + r'''
import gc
gc.unfreeze()                 # the worker froze its import's objects
imported = gc.get_objects()
mine = [[i] for i in range(100000)]   # arenas the job's child carves itself
mapping_of = mapping_finder()
def huge_mapping(o):
    m = mapping_of(id(o))
    return m[0] if m and "hg" in m[2] else None
for what, objs in (("import", imported), ("job", mine)):
    at = [huge_mapping(o) for o in objs]
    huge = [lo for lo in at if lo is not None]
    print(what, len(huge) / len(at), len(set(huge)), sum(lo % (2 << 20) == 0 for lo in set(huge)))
'''


def test_the_sage_workers_arenas_are_huge_pages_and_jobs_run_as_before(mcp):
    wait_idle(mcp, "sage")
    assert ok(mcp.run("pass", "python"))  # (a Python worker starts on its first call)
    workers = {w["kind"]: w for w in wait_idle(mcp, "python")["workers"]}
    assert workers["sage"]["object_arenas"] == "huge pages", workers
    assert workers["python"]["object_arenas"] == "CPython's own: not a warm Sage worker", workers
    r = mcp.run(PROBE, "sage")
    assert ok(r), r
    share = {}
    for line in r["stdout"].splitlines():
        what, part, mappings, aligned = line.split()
        share[what] = (float(part), int(mappings), int(aligned))
    part, mappings, aligned = share["import"]
    # a few merged runs of chunks, not one mapping per 1 MiB arena (~250)
    assert part >= 0.8 and 1 <= mappings <= 64, r["stdout"]
    assert aligned >= mappings // 2, r["stdout"]
    part, mappings, aligned = share["job"]
    assert part >= 0.99 and 1 <= mappings <= 64, r["stdout"]
    r = mcp.run(FACTOR, "sage")
    assert ok(r) and r["stdout"].strip() == FACTORED, r
