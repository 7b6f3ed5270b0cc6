"""Where a benchmark row's CPU went, from /proc: the machine's busy share
and the load generator's CPU (this process's waited children); the rest
of the busy time is the server's, the kernel's and a router's. Read
before and after a row; the difference says whether a lower rate came
from idle CPUs (a wait, a lock, a wake-up) or from more CPU per call.

The server's process tree is not summed apart: its workers' jobs and a
recycled worker are reaped without their time reaching an ancestor's
cutime, so a tree's sum lost CPU (and went negative across a recycle).
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


def children_seconds():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class Row:
    """CPU accounting of one row: Row() before, .end(calls) after;
    returns {'busy': share of all CPUs, 'client_ms': the load
    generator's CPU per call, 'rest_ms': the rest of the busy CPU per
    call (the server, the kernel, a router)}."""

    def __init__(self):
        self.m0 = machine_ticks()
        self.c0 = children_seconds()

    def end(self, calls):
        m1 = machine_ticks()
        client = children_seconds() - self.c0
        busy, total = m1[0] - self.m0[0], m1[1] - self.m0[1]
        n = max(calls, 1)
        return {"busy": busy / total if total else 0.0, "client_ms": 1000 * client / n,
                "rest_ms": 1000 * (busy / TICK - client) / n}
