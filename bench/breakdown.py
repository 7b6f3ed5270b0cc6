"""Where a warm call's time goes, from the stamps `sagebox mcp` prints with
SAGEBOX_WARM_TRACE set (src/util/trace.h) and the client's own send and
receive stamps. Every stamp is CLOCK_MONOTONIC in microseconds: the
client's (node's hrtime), the host's and the worker's (inside the sandbox:
a pid namespace has no clock of its own) are on one timeline.

Server stderr lines read here:
    sagebox: trace recv <us>             the host read a request line
    sagebox: trace job <us>              a job has its worker (runner)
    sagebox: trace frame <us>            the run frame and code are written
    sagebox: trace done_rx <us>          the host read the done frame
    sagebox: trace sent <us>             the host wrote a message line
    sagebox: warm trace: ... {json}      one job's worker stamps (zygote.py)
"""
import json
import re

TRACE_RE = re.compile(r"^sagebox: trace (\w+) (\d+)$")
WARM_RE = re.compile(r"^sagebox: warm trace: .*?(\{.*\})\s*$")

# (label, from, to): one segment of a call, in order. A stamp name is the
# worker's (zygote.py _job), "child_*" the job's child's, "host_*" the
# host's stdio, "client_*" the SDK client's.
SEGMENTS = (
    ("client -> host reads the request", "client_sent", "host_recv"),
    ("host: parse, check, audit, take a worker", "host_recv", "host_job"),
    ("host: write the run frame and code", "host_job", "host_frame"),
    ("frame -> worker has read it", "host_frame", "recv"),
    ("worker: take the spare (fork one if none)", "recv", "spare_taken"),
    ("worker: hand the code to the child", "spare_taken", "handed"),
    ("child ready (spare still setting up / pre-touching)", "handed", "child_ready_after"),
    ("child reads its job", "child_ready_after", "child_got_job"),
    ("child: limits, fds", "child_got_job", "child_code_start"),
    ("code runs, exit handlers, output closed", "child_code_start", "streams_closed"),
    ("child reaped, processes swept", "streams_closed", "swept"),
    ("worker: result frame", "swept", "done"),
    ("done -> host has read it", "done", "host_done_rx"),
    ("host: result JSON, audit, write it", "host_done_rx", "host_sent"),
    ("host -> client has the result (SDK parse)", "host_sent", "client_got"),
)
# Work of the worker between two jobs (after the result went out): the
# files reset, and forking the next spare; reported with the next job. When
# calls come back to back the spare is forked during the job instead (a
# stamp of that job).
BETWEEN = (
    ("reset of files and IPC (janitor)", "reset_us"),
    ("fork of the next spare after the job (worker side)", "spare_fork_us"),
    ("fork of the next spare during the job (back to back)", "spare_fork_in_job_us"),
)


def parse(stderr):
    """({host event: [stamps]}, [worker trace dicts])"""
    host, jobs = {}, []
    for line in stderr.splitlines():
        m = TRACE_RE.match(line)
        if m:
            host.setdefault(m.group(1), []).append(int(m.group(2)))
            continue
        m = WARM_RE.match(line)
        if m:
            try:
                jobs.append(json.loads(m.group(1)))
            except ValueError:
                pass
    return host, jobs


def calls_timeline(calls, stderr):
    """One dict of stamps per call that has a worker trace: the worker's,
    the child's, host_* (the first of each host event in the call, the
    last `sent`) and client_sent/client_got."""
    host, jobs = parse(stderr)
    out = []
    for c in calls:
        s, g = int(c["sent"]), int(c["got"])
        job = next((j for j in jobs if isinstance(j.get("recv"), int) and s <= j["recv"] <= g), None)
        if job is None:
            continue
        t = dict(job)
        t["client_sent"], t["client_got"] = s, g
        for ev, xs in host.items():
            if ev != "sent":
                t["host_" + ev] = next((x for x in xs if s <= x <= g), None)
        t["host_sent"] = next((x for x in reversed(host.get("sent", [])) if t.get("done", g) <= x <= g), None)
        if "child_ready" in t:
            # the child was ready before the job came, or the job waited
            t["child_ready_after"] = max(t["child_ready"], t["handed"])
        out.append(t)
    return out


def segments(timeline):
    """{label: [ms per call]} for SEGMENTS and BETWEEN, and "total"."""
    res = {}
    for label, a, b in SEGMENTS:
        xs = [(t[b] - t[a]) / 1000 for t in timeline if isinstance(t.get(a), int) and isinstance(t.get(b), int)]
        if xs:
            res[label] = xs
    for label, k in BETWEEN:
        xs = [t[k] / 1000 for t in timeline if isinstance(t.get(k), int)]
        if xs:
            res[label] = xs
    xs = [(t["recv"] - t["idle_from"]) / 1000 for t in timeline if isinstance(t.get("idle_from"), int)]
    if xs:
        res["worker idle before the request came (0: the request waited)"] = xs
    res["total (client)"] = [(t["client_got"] - t["client_sent"]) / 1000 for t in timeline]
    return res
