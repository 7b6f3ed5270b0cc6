"""memory.status_kib: a field of /proc/PID/status in kB, read as bytes (a
job's child reads its VmData on the call's path), and 0 when the field or
the process is not there; and CPython's object arenas carved from huge
pages (memory.huge_arenas, src/worker/huge_arenas.c) or left CPython's own."""
import os
import signal
import subprocess
import sys

import pytest

from conftest import BUNDLE, WORKER
from driver import memory
from vmaprobe import VMA_OF


def text_field(field, pid="self"):
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])


def test_fields_of_a_stopped_process_match_the_text():
    # a process that stands still (up, then stopped): its sizes do not
    # move between the two reads
    p = subprocess.Popen([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"],
                         stdout=subprocess.PIPE)
    try:
        assert p.stdout.readline() == b"up\n"
        os.kill(p.pid, signal.SIGSTOP)
        for field in ("VmData", "VmRSS", "VmPeak", "Threads"):
            assert memory.status_kib(field, p.pid) == text_field(field, p.pid) > 0
    finally:
        p.kill()
        p.wait()


def test_self_and_a_field_at_the_start_of_a_line_only():
    assert memory.status_kib("VmData") > 0
    # "Data" is the end of "VmData:", not a field of its own
    assert memory.status_kib("Data") == 0


def test_missing_field_or_process_is_zero():
    assert memory.status_kib("NoSuchField") == 0
    assert memory.status_kib("Name") == 0  # not a number
    dead = subprocess.Popen(["true"])
    dead.wait()
    assert memory.status_kib("VmRSS", dead.pid) == 0
    assert not os.path.exists("/proc/%d/status" % dead.pid)


# -- CPython's object arenas in huge pages (src/worker/huge_arenas.c)

SO = os.path.join(os.path.dirname(BUNDLE), "huge_arenas.so")

# Run in a child: the allocator, once set, is the process's for good.
ARENAS = VMA_OF + r'''
import gc, os, sys
sys.path.insert(0, %(worker)r)
from driver import memory

print(memory.huge_arenas())  # the source tree has no library to load
print(memory.set_arena_allocator(open(%(so)r, "rb").read(), "sagebox_huge_arenas"))
gc.disable()
data0 = memory.status_kib("VmData")
# small objects: ~40 MiB of arenas (the list made whole first: its own
# growth would mmap between two chunks and start a new run of them)
objs = [None] * 400000
for i in range(len(objs)):
    objs[i] = [i]
lo, hi, flags = vma_of(id(objs[-1]))
print(lo %% (2 << 20), (hi - lo) >= (8 << 20), "hg" in flags)
data1 = memory.status_kib("VmData")
del objs
gc.collect()
print((data1 - data0) >> 10 >= 30, (memory.status_kib("VmData") - data0) >> 10 <= 4)
import fcntl
lib = [l.split()[0] for l in open("/proc/self/maps") if "/memfd:sagebox-huge-arenas" in l][0]
try:
    fd = os.open("/proc/self/map_files/" + lib, os.O_RDONLY)  # needs CAP_SYS_ADMIN
    print(fcntl.fcntl(fd, fcntl.F_GET_SEALS) == (fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE))
except PermissionError:
    print("not root")
'''


def test_arenas_come_from_adjacent_huge_page_chunks_and_go_back_when_empty():
    if not os.path.exists(SO):
        pytest.skip(f"no built {SO} (build first)")
    p = subprocess.run([sys.executable, "-c", ARENAS % {"worker": WORKER, "so": SO}],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("not in this driver"), lines
    assert lines[1] == "None", lines                    # installed
    # the last object's arena: in a chunk aligned to 2 MiB, merged with
    # its neighbours into one mapping of many chunks, advised huge
    assert lines[2] == "0 True True", lines
    # ~40 MiB came as arenas, and went back to the kernel once empty
    assert lines[3] == "True True", lines
    # the library's file is sealed: its code cannot change under the worker
    assert lines[4] == ("True" if os.geteuid() == 0 else "not root"), lines


def test_a_library_that_does_not_load_leaves_cpythons_own():
    code = ("import sys; sys.path.insert(0, %r)\nfrom driver import memory\n"
            "print(memory.set_arena_allocator(b'not a shared object', 'sagebox_huge_arenas'))\n"
            "print(len([[i] for i in range(100000)]))\n" % WORKER)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    why, n = p.stdout.splitlines()
    assert why.startswith("cannot load it: ") and n == "100000", p.stdout
