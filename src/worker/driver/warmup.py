"""What Sage does slowly the first time (the first factor, the first plot:
matplotlib and fonts, the first symbolic integral: Maxima on ECL,
numerics, linear algebra), done once in a process that later forks the
processes that run code: the warm worker (zygote.py) and a session's
controller (session.py). Every fork then starts warm."""
import sys
import time

from . import cell, memory

# One step each, run when the process is idle; a call that comes while a
# step runs waits for it, so the long ones are cut where they can be:
# matplotlib's import apart from the first plot, Maxima's start (the first
# integral, ~0.65-0.75 s here, the longest) apart from the rest of the
# calculus.
SAGE_WARMUPS = (
    "R.<x> = QQ[]\nfactor(x^4 - 1)\n",
    "import matplotlib.pyplot\n",
    "import io\n_b = io.BytesIO()\n"
    "plot(sin(x), (x, 0, 1)).matplotlib().savefig(_b, format='png')\n",
    "integrate(x^2, x)\n",
    "solve(x^2 - 2 == 0, x); simplify(sin(x)^2 + cos(x)^2)\n",
    "matrix(QQ, 3, 3, range(9)).eigenvalues(); find_root(x^2 - 2, 0, 2)\n",
    "N(pi, 50); is_prime(2^61 - 1); var('y'); diff(sin(x*y), x)\n",
)
# After the last cell: the heap is backed with huge pages (cheaper forks),
# in pieces of memory.COLLAPSE_CHUNK, as many a step as fit in
# COLLAPSE_STEP_S (and one piece more: a step takes ~80 ms at most here).
COLLAPSE_STEP_S = 0.03


def step(warmups, glb, budget_kib, libc):
    """Run the next of warmups (a list, consumed): a cell, in a throwaway
    copy of glb, its output where fds 1 and 2 point (the caller's
    /dev/null), or pieces of the heap to back with huge pages (listed
    by the last cell's step; as many a step as fit in COLLAPSE_STEP_S). Stops
    them all when the process's resident size reaches 3/4 of budget_kib
    (what it may use for itself). True when it ran a cell (which may have
    written files)."""
    item = warmups.pop(0)
    if glb is None or memory.status_kib("VmRSS") > budget_kib * 3 // 4:
        warmups.clear()
        return False
    if isinstance(item, tuple):
        # pieces, until this step has taken COLLAPSE_STEP_S (most are
        # done in no time: already huge, or never touched)
        start = time.monotonic()
        memory.collapse(libc, *item)
        while warmups and isinstance(warmups[0], tuple) and time.monotonic() - start < COLLAPSE_STEP_S:
            memory.collapse(libc, *warmups.pop(0))
        return False
    try:
        exec(compile(cell.sage_preparse(item), "<warm-up>", "exec"), dict(glb))
    except BaseException:
        pass
    for f in (sys.stdout, sys.stderr):
        f.flush()
    memory.freeze()
    if not warmups:
        warmups.extend(memory.heap_chunks())
    return True
