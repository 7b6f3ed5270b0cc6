"""PARI's stack in warm Sage jobs (src/worker/driver/pari_stack.py): each
job's maximum is its share of the job's memory limit, whether the job's
own fit set it (the worker's first job) or the worker fitted it once
for all later forks (prefit); a computation that outgrows it gets PARI's
own error, never the "not enough memory" warning, and the next job has
the same stack again."""
from conftest import FACTOR, FACTORED, ok, start_mcp, wait_idle

MIB = 1 << 20
LIMIT_MIB = 512

JOB = ("print(pari.stacksizemax())\n"
       "print(len(pari('vector(3*10^6, i, i)')))\n"
       "try:\n    pari('vector(5*10^7, i, i)')\nexcept PariError as e:\n    print(str(e).split(' (')[0])\n"
       "print(pari.stacksizemax())\n")


def test_every_warm_job_gets_its_share_of_the_limit_for_pari():
    m = start_mcp("--memory", f"{LIMIT_MIB}m")
    try:
        wait_idle(m, "sage")
        tops = []
        for i in range(4):
            r = m.run(JOB, "sage")
            assert ok(r), r
            assert "not enough memory" not in r["stderr"] and "Warning" not in r["stderr"], r
            lines = r["stdout"].splitlines()
            assert lines[1] == "3000000" and lines[2].endswith("the PARI stack overflows"), r
            assert lines[0] == lines[3], r  # the overflow did not shrink it
            tops.append(int(lines[0]))
        # the share (half of the limit) in the first job and in every later
        # one, whichever fit set it: within pari_stack.FIT_SLACK
        share = LIMIT_MIB * MIB // 2
        assert all(share - 2 * MIB <= t <= share for t in tops), (tops, share)
        assert len(set(tops)) == 1, tops
        r = m.run(FACTOR, "sage")
        assert ok(r) and r["stdout"].strip() == FACTORED, r
    finally:
        m.close()
