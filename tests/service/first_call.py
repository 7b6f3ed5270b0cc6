"""The first call after a client restart, with and without --service
(docs/WARM.md): spawn `sagebox mcp`, initialize, one Sage call,
close. Not a test: run it as `python3 tests/service/first_call.py`."""
import os, sys, time, tempfile, statistics, signal, re
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../lib"))
from mcpclient import MCP
BIN = os.environ.get("SAGEBOX_BIN", os.path.join(HERE, "../../build/sagebox"))
d = tempfile.mkdtemp(prefix="sbm", dir="/tmp")
os.makedirs(d + "/rt", mode=0o700)
env = {k: v for k, v in os.environ.items() if not k.startswith("SAGEBOX_")}
env.update({"XDG_RUNTIME_DIR": d + "/rt", "XDG_STATE_HOME": d + "/state"})
CODE = "print(factor(2^64-1))"
def first(args):
    t = time.monotonic()
    m = MCP(BIN, args, env=env)
    r = m.run(CODE, "sage")
    dt = time.monotonic() - t
    assert r.get("exit_code") == 0, r
    m.close()
    return dt * 1000
base = ("--backend", "native")
inproc = [first(base) for _ in range(5)]
svc = ("--service", "--service-idle-seconds", "60", *base)
cold = first(svc)
warm = [first(svc) for _ in range(8)]
print("in-process first call ms:", [round(x) for x in inproc], "median", round(statistics.median(inproc)))
print("service from nothing ms:", round(cold))
print("service up, restarted client ms:", [round(x) for x in warm], "median", round(statistics.median(warm)))
log = open(d + "/state/sagebox/service.log").read()
for pid in re.findall(r"service: pid (\d+)", log):
    os.kill(int(pid), signal.SIGTERM)
import shutil
shutil.rmtree(d, ignore_errors=True)
