"""All of Sage works inside, including the pexpect interfaces (ptys)."""
from conftest import run


def test_seed_self_test_job():
    r = run("R.<x> = QQ[]\nprint(factor(x^4 - 1))\n", lang="sage", timeout=120)
    assert r.out.strip() == "(x - 1) * (x + 1) * (x^2 + 1)", r


def test_maxima_and_gap_via_ptys():
    # GAP and Sage together need more than the 256m default.
    r = run("print(maxima('1+1'))\nprint(gap('1+1'))\n", lang="sage", args=("--memory", "1g"), timeout=180)
    assert [l.strip() for l in r.out.splitlines() if l.strip()] == ["2", "2"], r
