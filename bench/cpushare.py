"""Where a benchmark row's CPU went, from /proc: the machine's busy share,
a server's process tree (itself, its workers and their jobs), and the
load generator (this process's waited children). Read before and after a
row; the difference says whether a lower rate came from idle CPUs (a
wait, a lock, a wake-up) or from more CPU per call, and on whose side.

A process tree's CPU is the sum of utime, stime, cutime and cstime over
its live processes: a reaped child's time is in its parent's cutime, so a
job a worker waited for and a worker the server replaced are counted once.
"""
import os
import resource

TICK = os.sysconf("SC_CLK_TCK")


def machine_ticks():
    """(busy, total) clock ticks of all CPUs since boot."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]  # idle, iowait
    total = sum(v[:8])  # steal included; guest time is inside user
    return total - idle, total


def tree_seconds(root):
    """CPU seconds of root and its live descendants (see the top)."""
    parent, cpu = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
        except OSError:
            continue
        f = s[s.rindex(")") + 2:].split()  # from field 3 (state) on
        parent[int(d)] = int(f[1])
        cpu[int(d)] = sum(int(x) for x in f[11:15])  # fields 14-17
    keep, todo = set(), [root]
    children = {}
    for p, pp in parent.items():
        children.setdefault(pp, []).append(p)
    while todo:
        p = todo.pop()
        if p in keep or p not in cpu:
            continue
        keep.add(p)
        todo += children.get(p, [])
    return sum(cpu[p] for p in keep) / TICK


def children_seconds():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class Row:
    """CPU accounting of one row: Row(server_pids) before, .end(calls)
    after; returns {'busy': share of all CPUs, 'server_ms', 'client_ms',
    'other_ms': CPU per call}."""

    def __init__(self, server_pids):
        self.pids = list(server_pids)
        self.m0 = machine_ticks()
        self.s0 = sum(tree_seconds(p) for p in self.pids)
        self.c0 = children_seconds()

    def end(self, calls):
        m1 = machine_ticks()
        s1 = sum(tree_seconds(p) for p in self.pids)
        c1 = children_seconds()
        busy, total = m1[0] - self.m0[0], m1[1] - self.m0[1]
        n = max(calls, 1)
        server, client = s1 - self.s0, c1 - self.c0
        return {"busy": busy / total if total else 0.0, "server_ms": 1000 * server / n,
                "client_ms": 1000 * client / n,
                "other_ms": 1000 * (busy / TICK - server - client) / n}
