"""The CPU-limit probe the sandbox and warm suites share: code that keeps two
processes busy for ~1.5 s and prints {"wall", "cpu"} (the CPU seconds they
used), and the bound a run held to `cpus` cores must stay within."""

BUSY = r"""
import json, os, time
t0 = time.time()
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        end = time.time() + 1.5
        while time.time() < end:
            pass
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
wall = time.time() - t0
t = os.times()
print(json.dumps({"wall": wall, "cpu": t.children_user + t.children_system}))
"""


def held_to(p, cpus):
    """Two busy processes for ~1.5 s use ~3 CPU-seconds unthrottled; held
    to `cpus` cores, about cpus * wall plus one period's burst."""
    return p["cpu"] <= cpus * p["wall"] * 1.3 + 0.2
