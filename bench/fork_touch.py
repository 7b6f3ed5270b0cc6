"""What a new fork of a Sage process pays to touch its memory on this
machine, measured beside the floors (bench/run): the floor (fork + _exit +
waitpid) touches no page, but every warm call's child does. On a machine
where the first touch of a page in a new address space is dear (seen on
one VM: ~6 us a page read, ~16 us a page written, against well under 1 us
on bare metal), a Sage computation in a new fork costs several floors
whatever the worker does ahead of it; this says how much, so a missed
target can be told apart from a slow worker.

Three figures, from one /usr/bin/python3 that imported sage.all:
  - read_us, write_us: per page, the first read and the first write
    (copy-on-write) of a child, over a PAGES-page anonymous region the
    parent wrote (p50 of the per-child averages);
  - job_ms: fork, the self-test run in the child (preparsed, in a copy of
    sage.all's names, its output to /dev/null), _exit, waitpid, with the
    parent warmed by one run of it (p50); job_faults: the page faults the
    child took for it (p50).
"""
import json
import subprocess

PAGES = 4096
N = 15

SCRIPT = r"""
import json, mmap, os, resource, statistics, sys, time
import sage.all
from sage.repl.preparse import preparse
pages, n, src = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
names = {k: getattr(sage.all, k) for k in dir(sage.all) if not k.startswith("__")}
code = compile(preparse(src), "<self-test>", "exec")
null = os.open("/dev/null", os.O_WRONLY)
out = os.dup(1)
os.dup2(null, 1)
exec(code, dict(names))  # the parent is warm: the child's cost is the fork's
sys.stdout.flush()
region = mmap.mmap(-1, pages * mmap.PAGESIZE)
for i in range(0, len(region), mmap.PAGESIZE):
    region[i] = 1


def child(work):
    r, w = os.pipe()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        res = work()
        res["faults"] = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
        os.write(w, json.dumps(res).encode())
        os._exit(0)
    os.close(w)
    data = os.read(r, 65536)
    os.close(r)
    os.waitpid(pid, 0)
    res = json.loads(data)
    res["ms"] = (time.perf_counter() - t0) * 1000
    return res


def touch(write):
    def work():
        t = time.perf_counter()
        s = 0
        for i in range(0, len(region), mmap.PAGESIZE):
            if write:
                region[i] = 2
            else:
                s += region[i]
        return {"us": (time.perf_counter() - t) * 1e6 / pages}
    return work


def job():
    exec(code, dict(names))
    sys.stdout.flush()
    return {}


reads = [child(touch(False))["us"] for _ in range(5)]
writes = [child(touch(True))["us"] for _ in range(5)]
jobs = [child(job) for _ in range(n + 2)][2:]
os.dup2(out, 1)
print(json.dumps({"read_us": statistics.median(reads), "write_us": statistics.median(writes),
                  "job_ms": statistics.median(j["ms"] for j in jobs),
                  "job_faults": statistics.median(j["faults"] for j in jobs)}))
"""


def measure(self_test, env):
    p = subprocess.run(["/usr/bin/python3", "-c", SCRIPT, str(PAGES), str(N), self_test], capture_output=True,
                       text=True, env=env, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"fork_touch: {p.stderr[-1000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def markdown(t, floor_sage, fmt_ms):
    print("What a new fork of the Sage process pays to touch memory here (bench/fork_touch.py; "
          "the floor above touches none):\n")
    print("| a child of `/usr/bin/python3` with `sage.all` imported | p50 |")
    print("|---|---:|")
    print(f"| first read of a page the parent wrote | {t['read_us']:.2f} us a page |")
    print(f"| first write of such a page (copy-on-write) | {t['write_us']:.2f} us a page |")
    print(f"| fork + the self-test in the child + exit + wait, nothing done ahead | {fmt_ms(t['job_ms'])} "
          f"({t['job_ms'] / floor_sage:.1f}x the Sage floor; {t['job_faults']:.0f} page faults) |")
    print()
