"""Named-workspace rows of the benchmark (native, as root), through the
stdio client of the tests (tests/lib/mcpclient.py) on one `sagebox mcp`
with a data directory of its own:
  - session_open of a Python session with a spare ready: without a
    workspace, on an empty workspace, and on one of 1,000 files / 100 MiB
    (made with `sagebox workspaces import`); each session closed, then a
    pause for the next spare;
  - what persistence adds to a call: `pass` in a workspace session against
    a plain session (goal <= 1 ms at p50), and a call that writes 10 MiB
    (goal <= 5 % at p50; the sync runs after the call's result, and the row
    also gives the time until the store has the file);
  - session_save of a typical Sage state (a polynomial ring and an element,
    a 40x40 rational matrix, a dict, a list of 2,000 rationals), and
    session_open with restore of it against one without."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
from mcpclient import MCP  # noqa: E402

SPARE_PAUSE = 3.0
SAGE_SPARE_PAUSE = 20.0
BIG_FILES, BIG_BYTES = 1000, 100 << 20
WRITE = 10 << 20
SAGE_STATE = """
R.<x> = QQ[]
p = (x^7 - 3*x^2 + 1)^5
M = matrix(QQ, 40, 40, lambda i, j: 1/(i + j + 1))
d = {'primes': primes_first_n(200), 'label': 'chapter 3'}
L = [QQ(k)/(k + 1) for k in range(2000)]
"""


def _ms(t0):
    return (time.monotonic() - t0) * 1000


def _call(m, tool, args):
    r = m.call(tool, args, timeout=600)
    if r.get("isError"):
        raise RuntimeError(f"{tool}: {r['content'][0]['text']}")
    return r["structuredContent"]


def _opens(m, n, args, pause):
    out = []
    for _ in range(n):
        time.sleep(pause)
        t0 = time.monotonic()
        sid = _call(m, "session_open", args)["session_id"]
        out.append(_ms(t0))
        _call(m, "session_close", {"session_id": sid})
    return out


def _calls(m, sid, code, n, tool="run_python"):
    out = []
    for _ in range(n):
        t0 = time.monotonic()
        _call(m, tool, {"session_id": sid, "code": code})
        out.append(_ms(t0))
    return out


def _big_tree(base):
    d = os.path.join(base, "big")
    each = BIG_BYTES // BIG_FILES
    block = os.urandom(each)
    for i in range(BIG_FILES):
        sub = os.path.join(d, "d%02d" % (i // 50))
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, "f%04d.bin" % i), "wb") as f:
            f.write(block)
    return d


def measure(binary, n, log, env_clean):
    base = tempfile.mkdtemp(prefix="sagebox-bench-ws-")
    try:
        env = env_clean(XDG_DATA_HOME=os.path.join(base, "data"))
        os.mkdir(env["XDG_DATA_HOME"], 0o700)
        log("  workspaces: a 1,000-file / 100 MiB workspace ...")
        p = subprocess.run([binary, "workspaces", "import", _big_tree(base), "big"], env=env, capture_output=True,
                           text=True)
        if p.returncode:
            raise RuntimeError(f"workspaces import: {p.stderr}")
        R = {}
        m = MCP(binary, ("--backend", "native", "--isolation", "warm"), env=env)
        try:
            log("  workspaces: opens ...")
            R["open_plain"] = _opens(m, n, {"lang": "python"}, SPARE_PAUSE)
            R["open_empty"] = _opens(m, n, {"lang": "python", "workspace": "empty"}, SPARE_PAUSE)
            R["open_big"] = _opens(m, max(3, n // 3), {"lang": "python", "workspace": "big"}, SPARE_PAUSE + 2)
            log("  workspaces: the per-call cost ...")
            plain = _call(m, "session_open", {"lang": "python"})["session_id"]
            time.sleep(SPARE_PAUSE)
            ws = _call(m, "session_open", {"lang": "python", "workspace": "calls"})["session_id"]
            # spread: the two sessions' calls alternate, as the machine drifts
            R["pass_plain"], R["pass_ws"], R["write_plain"], R["write_ws"], R["stored"] = [], [], [], [], []
            wcode = "open('/work/data.bin', 'wb').write(b'x' * %d)" % WRITE
            stored = os.path.join(env["XDG_DATA_HOME"], "sagebox", "workspaces", "local", "calls", "files",
                                  "data.bin")
            for _ in range(3):
                R["pass_plain"] += _calls(m, plain, "pass", n)
                R["pass_ws"] += _calls(m, ws, "pass", n)
            for i in range(n):
                R["write_plain"] += _calls(m, plain, wcode, 1)
                if os.path.exists(stored):
                    os.unlink(stored)  # (by hand: the next sync's rename puts it back)
                t0 = time.monotonic()
                R["write_ws"] += _calls(m, ws, wcode, 1)
                while not (os.path.exists(stored) and os.stat(stored).st_size == WRITE):
                    time.sleep(0.0005)
                    if _ms(t0) > 60000:
                        raise RuntimeError("the 10 MiB file never reached the store")
                R["stored"].append(_ms(t0))
                # the next write must change the file again
                _calls(m, ws, "import os\nos.unlink('/work/data.bin')", 1)
                time.sleep(0.2)
            _call(m, "session_close", {"session_id": plain})
            _call(m, "session_close", {"session_id": ws})
            log("  workspaces: session_save / restore of a Sage state ...")
            time.sleep(SAGE_SPARE_PAUSE)
            sid = _call(m, "session_open", {"lang": "sage", "workspace": "sage"})["session_id"]
            _call(m, "run_sagemath", {"session_id": sid, "code": SAGE_STATE})
            R["save"] = []
            for _ in range(max(5, n // 3)):
                t0 = time.monotonic()
                st = _call(m, "session_save", {"session_id": sid})
                R["save"].append(_ms(t0))
            R["state_bytes"] = st["state"]["bytes"]
            _call(m, "session_close", {"session_id": sid})
            R["open_sage"], R["open_sage_restore"] = [], []
            for _ in range(max(3, n // 5)):
                R["open_sage"] += _opens(m, 1, {"lang": "sage", "workspace": "sage"}, SAGE_SPARE_PAUSE)
                R["open_sage_restore"] += _opens(m, 1, {"lang": "sage", "workspace": "sage", "restore": True},
                                                 SAGE_SPARE_PAUSE)
        finally:
            m.close()
        return R
    finally:
        shutil.rmtree(base, ignore_errors=True)


def print_rows(R, pct, fmt_ms):
    def p50(k):
        return statistics.median(R[k])
    print("| named workspace (native, as root) | p50 | p95 | goal |")
    print("|---|---:|---:|---|")
    print(f"| session_open, Python, spare ready, no workspace | {fmt_ms(p50('open_plain'))} | "
          f"{fmt_ms(pct(R['open_plain'], 95))} | |")
    print(f"| session_open on an empty workspace | {fmt_ms(p50('open_empty'))} | {fmt_ms(pct(R['open_empty'], 95))} | |")
    print(f"| session_open on a workspace of {BIG_FILES} files / {BIG_BYTES >> 20} MiB | {fmt_ms(p50('open_big'))} | "
          f"{fmt_ms(pct(R['open_big'], 95))} | |")
    d = p50("pass_ws") - p50("pass_plain")
    print(f"| a call `pass`: plain session / workspace session | {fmt_ms(p50('pass_plain'))} / "
          f"{fmt_ms(p50('pass_ws'))} (+{d:.2f} ms) | {fmt_ms(pct(R['pass_plain'], 95))} / "
          f"{fmt_ms(pct(R['pass_ws'], 95))} | <= 1 ms more: {'met' if d <= 1 else 'MISSED'} |")
    w = p50("write_ws") / p50("write_plain") - 1
    print(f"| a call writing {WRITE >> 20} MiB: plain / workspace session | {fmt_ms(p50('write_plain'))} / "
          f"{fmt_ms(p50('write_ws'))} ({w * 100:+.1f} %) | {fmt_ms(pct(R['write_plain'], 95))} / "
          f"{fmt_ms(pct(R['write_ws'], 95))} | <= 5 % more: {'met' if w <= 0.05 else 'MISSED'} |")
    print(f"| ... from that call's start until the store on disk has the file | {fmt_ms(p50('stored'))} | "
          f"{fmt_ms(pct(R['stored'], 95))} | |")
    print(f"| session_save of a Sage state ({R['state_bytes'] / 1024:.0f} KiB pickled) | {fmt_ms(p50('save'))} | "
          f"{fmt_ms(pct(R['save'], 95))} | |")
    print(f"| session_open, Sage, on that workspace / with restore: true | {fmt_ms(p50('open_sage'))} / "
          f"{fmt_ms(p50('open_sage_restore'))} | {fmt_ms(pct(R['open_sage'], 95))} / "
          f"{fmt_ms(pct(R['open_sage_restore'], 95))} | |")
    print()
