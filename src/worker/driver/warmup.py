"""What Sage does slowly the first time (the first factor, the first plot:
matplotlib and fonts, the first symbolic integral: Maxima on ECL,
numerics, linear algebra), done once in a process that later forks the
processes that run code: the warm worker (zygote.py) and a session's
controller (session.py). Every fork then starts warm."""
import sys

from . import cell, memory

SAGE_WARMUPS = (
    "R.<x> = QQ[]\nfactor(x^4 - 1)\n",
    "import io\n_b = io.BytesIO()\n"
    "plot(sin(x), (x, 0, 1)).matplotlib().savefig(_b, format='png')\n",
    "integrate(x^2, x); solve(x^2 - 2 == 0, x); simplify(sin(x)^2 + cos(x)^2)\n",
    "matrix(QQ, 3, 3, range(9)).eigenvalues(); find_root(x^2 - 2, 0, 2)\n",
    "N(pi, 50); is_prime(2^61 - 1); var('y'); diff(sin(x*y), x)\n",
)


def step(warmups, glb, budget_kib, libc):
    """Run the next of warmups (a list, consumed) in a throwaway copy of
    glb, its output where fds 1 and 2 point (the caller's /dev/null).
    Stops them all when the process's resident size reaches 3/4 of
    budget_kib (what it may use for itself); the last one also backs the
    heap with huge pages (cheaper forks)."""
    src = warmups.pop(0)
    if glb is None or memory.status_kib("VmRSS") > budget_kib * 3 // 4:
        warmups.clear()
        return
    try:
        exec(compile(cell.sage_preparse(src), "<warm-up>", "exec"), dict(glb))
    except BaseException:
        pass
    for f in (sys.stdout, sys.stderr):
        f.flush()
    memory.freeze()
    if not warmups:
        memory.collapse_heap(libc)
