"""Session rows of the benchmark (the session speed goals), through the SDK
client (bench/sdk_client.mjs, mode `session`), native:
  - session_open with a ready spare: p50 over opens (each session closed,
    then a pause long enough for the next spare);
  - the first session_open after the server started (no spare yet);
  - a call in an open session, back to back, code `pass` (`:` in a shell
    session): the session path's overhead over the code's own run time;
  - the idle interpreter's memory as session_list reports it.
Goals: open <= 100 ms p50 with a spare ready; call overhead
<= 5 ms p50."""
TOOL = {"sage": "run_sagemath", "python": "run_python", "shell": "run_shell"}
NOP = {"sage": "pass", "python": "pass", "shell": ":"}
# How long a spare of the language takes to be ready again, at most.
SPARE_PAUSE_MS = {"sage": 20000, "python": 3000, "shell": 2000}
LANGS = ("python", "sage", "shell")


def measure(env, sdk, n, log, backend="native"):
    out = {}
    for lang in LANGS:
        log(f"  session, {lang} ...")
        out[lang] = sdk({"mode": "session", "server": env.server(backend, "warm"), "lang": lang,
                         "opens": min(n, 10) if lang == "sage" else n, "pause_ms": SPARE_PAUSE_MS[lang],
                         "tool": TOOL[lang], "nop": NOP[lang], "n": n * 3})
    # the call overhead target: a Python session's `pass`, p50
    import statistics
    out["overhead_p50"] = statistics.median(out["python"]["calls"])
    return out


def print_rows(res, pct, fmt_ms, who="native"):
    print(f"| session ({who}, SDK client) | first open | open with a spare p50 | p95 | call `pass` p50 | p95 "
          "| idle RSS (private) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for lang in LANGS:
        r = res[lang]
        print(f"| {lang} | {fmt_ms(r['first_ms'])} | {fmt_ms(pct(r['opens'], 50))} | {fmt_ms(pct(r['opens'], 95))} | "
              f"{fmt_ms(pct(r['calls'], 50))} | {fmt_ms(pct(r['calls'], 95))} | "
              f"{r['rss'] / 2**20:.1f} MiB ({r['private'] / 2**20:.1f} MiB) |")
    print()
