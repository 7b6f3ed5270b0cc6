"""warmup.step: one short step at a time, so that a call that comes while
the worker warms up waits for one step, not for all of them. The cells
one by one, then the heap backed with huge pages in pieces
(memory.heap_chunks, memory.collapse), as many a step as fit in
warmup.COLLAPSE_STEP_S. Each test runs in a child process: a collapse
changes the process's memory, and the cells import parts of Sage."""
import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.abspath(os.path.join(HERE, "..", "..", "src", "worker"))
HUGE = 2 << 20


def run(body):
    """body's stdout lines, run by a fresh interpreter with the driver."""
    src = "import sys\nsys.path.insert(0, %r)\n" % WORKER + textwrap.dedent(body)
    p = subprocess.run([sys.executable, "-I", "-c", src], capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def test_heap_chunks_are_whole_huge_pages_of_writable_anonymous_memory():
    out = run("""
        from driver import memory
        block = bytearray(40 << 20)   # its own anonymous mapping (malloc uses mmap for it)
        maps = []
        for line in open("/proc/self/maps"):
            p = line.split()
            lo, hi = (int(x, 16) for x in p[0].split("-"))
            maps.append((lo, hi, p[1], p[5] if len(p) > 5 else ""))
        chunks = memory.heap_chunks()
        print(len(chunks))
        for lo, hi in chunks:
            assert lo % memory.HUGE_PAGE == 0 and hi % memory.HUGE_PAGE == 0, (lo, hi)
            assert 0 < hi - lo <= memory.COLLAPSE_CHUNK, (lo, hi)
            inside = [m for m in maps if m[0] <= lo and hi <= m[1]]
            assert len(inside) == 1, (lo, hi)
            assert inside[0][2].startswith("rw") and inside[0][3] in ("", "[heap]"), inside
        # the 40 MiB block is covered, in pieces of at most COLLAPSE_CHUNK
        import ctypes
        start = ctypes.addressof((ctypes.c_char * len(block)).from_buffer(block))
        end = start + len(block)
        covered = sum(min(hi, end) - max(lo, start) for lo, hi in chunks if lo < end and hi > start)
        print(covered >= len(block) - 2 * memory.HUGE_PAGE)
        print(sum(1 for lo, hi in chunks if lo < end and hi > start) >= 3)
    """)
    assert int(out[0]) > 0
    assert out[1:] == ["True", "True"]


def test_cells_one_a_step_then_the_collapse_in_pieces():
    out = run("""
        from driver import confine, namespaces, warmup
        # (a small interpreter's mappings hold a whole aligned huge page or
        # not, as ASLR places them: this block makes sure there are pieces)
        block = bytearray(40 << 20)
        glb = namespaces.python_globals()
        cells = ["a = 1\\n", "import json\\n", "b = [0] * 1000\\n"]
        todo = list(cells)
        done = []
        while todo:
            ran = warmup.step(todo, glb, 1 << 30, confine.libc())
            done.append((ran, [x for x in todo if isinstance(x, str)]))
        # three cells, each alone in its step (the last lists the collapse's
        # pieces); then the collapse: the pieces consumed over one or more steps
        print(done[:3] == [(True, cells[1:]), (True, cells[2:]), (True, [])])
        print(all(ran is False for ran, _ in done[3:]) and len(done) > 3)
        print("a" not in glb and "b" not in glb)   # a throwaway copy of glb
    """)
    assert out == ["True", "True", "True"]


def test_a_collapse_step_takes_pieces_while_its_time_lasts():
    out = run("""
        from driver import confine, memory, namespaces, warmup
        block = bytearray(96 << 20)
        block[::4096] = b"x" * len(block[::4096])
        glb = namespaces.python_globals()
        def steps(budget):
            warmup.COLLAPSE_STEP_S = budget
            todo = memory.heap_chunks()
            n = 0
            while todo:
                warmup.step(todo, glb, 1 << 30, confine.libc())
                n += 1
            return n
        # (96 MiB: six pieces at least)
        print(steps(0.0) >= 6)      # no time: one piece a step
        print(steps(60.0) == 1)     # all the time in the world: one step
    """)
    assert out == ["True", "True"]


def test_the_resident_size_budget_stops_everything():
    out = run("""
        from driver import confine, memory, namespaces, warmup
        todo = ["a = 1\\n", "b = 2\\n", (0, memory.HUGE_PAGE)]
        print(warmup.step(todo, namespaces.python_globals(), 1, confine.libc()), todo)
    """)
    assert out == ["False []"]


def test_collapse_backs_touched_memory_with_huge_pages():
    import pytest
    if "[never]" in open("/sys/kernel/mm/transparent_hugepage/enabled").read():
        pytest.skip("transparent huge pages are off on this machine")
    if tuple(int(x) for x in os.uname().release.split(".")[:2]) < (6, 1):
        pytest.skip("MADV_COLLAPSE needs Linux 6.1")
    out = run("""
        import ctypes
        from driver import confine, memory
        block = bytearray(64 << 20)
        start = ctypes.addressof((ctypes.c_char * len(block)).from_buffer(block))
        block[::4096] = b"x" * len(block[::4096])
        end = start + len(block)
        def huge_kib():
            # (madvise splits the mapping: every part of the block counts)
            total, inside = 0, False
            for line in open("/proc/self/smaps"):
                p = line.split()
                if "-" in p[0] and len(p) >= 5 and ":" not in p[0]:
                    a, b = (int(x, 16) for x in p[0].split("-"))
                    inside = a < end and b > start
                elif inside and p[0] == "AnonHugePages:":
                    total += int(p[1])
            return total
        before = huge_kib()
        libc = confine.libc()
        for lo, hi in memory.heap_chunks():
            memory.collapse(libc, lo, hi)
        print(before, huge_kib())
    """)
    before, after = (int(x) for x in out[0].split())
    # MADV_COLLAPSE (Linux 6.1) makes most of a touched 64 MiB huge
    assert after >= before + 32 * 1024, (before, after)
