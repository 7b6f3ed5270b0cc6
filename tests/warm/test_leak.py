"""Issue 13.1: a warm call must not recover any byte of an earlier call's
code, output or files from its own memory. Each job's child is a fork of the
worker; whatever the worker ever held of a job (freed, not cleared) would be
inherited by every later job. Call 1 plants secrets in its code, its output
(stdout and stderr) and a file in /tmp (name and contents); call 2, on the
same worker, reads its whole address space (/proc/self/maps +
/proc/self/mem) and looks for them.

Call 2's own code must hold the secrets too, to search for them, so it holds
each as two halves and counts a hit only where the halves are adjacent."""
import secrets

import pytest

from conftest import ok

SCANNER = r'''
import os
def _scan(needles):
    hits = dict.fromkeys(needles, 0)
    regions = scanned = 0
    with open("/proc/self/maps") as f:
        maps = f.read().splitlines()
    fd = os.open("/proc/self/mem", os.O_RDONLY)
    step = 8 << 20
    for line in maps:
        parts = line.split()
        if parts[1][0] != "r" or (len(parts) > 5 and parts[5] in ("[vvar]", "[vvar_vclock]", "[vsyscall]")):
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        regions += 1
        pos = lo
        while pos < hi:
            try:
                buf = os.pread(fd, min(step + 64, hi - pos), pos)
            except OSError:
                break
            scanned += len(buf)
            for key, (a, b) in needles.items():
                i = buf.find(a)
                while i >= 0:
                    if buf[i + len(a):i + len(a) + len(b)] == b:
                        hits[key] += 1
                    i = buf.find(a, i + 1)
            pos += step
    os.close(fd)
    print("scanned", regions, scanned >> 20, sorted(k for k, v in hits.items() if v))
'''


def _halves(s):
    return s[:len(s) // 2], s[len(s) // 2:]


def _secrets(tag):
    return {k: f"SB{tag}{k.upper()}{secrets.token_hex(12)}" for k in ("code", "out", "err", "fname", "fdata")}


def _plant(lang, s):
    """Code for call 1: s['code'] appears whole only in the code; the
    others only in what the job produces (output, a file's name and
    contents), built from halves at run time."""
    h = {k: _halves(v) for k, v in s.items()}
    if lang == "shell":
        return (f"code_secret={s['code']}\n"
                f"printf '%s%s\\n' {h['out'][0]} {h['out'][1]}\n"
                f"printf '%s%s\\n' {h['err'][0]} {h['err'][1]} >&2\n"
                f"printf '%s%s' {h['fdata'][0]} {h['fdata'][1]} > /tmp/{h['fname'][0]}{h['fname'][1]}\n"
                "echo planted\n")
    return (f"code_secret = {s['code']!r}\n"
            "import sys\n"
            f"print({h['out'][0]!r} + {h['out'][1]!r})\n"
            f"print({h['err'][0]!r} + {h['err'][1]!r}, file=sys.stderr)\n"
            f"open('/tmp/' + {h['fname'][0]!r} + {h['fname'][1]!r}, 'w').write({h['fdata'][0]!r} + {h['fdata'][1]!r})\n"
            "print('planted')\n")


def _scan_code(lang, s):
    needles = "{" + ", ".join(f"{k!r}: ({a.encode()!r}, {b.encode()!r})"
                              for k, (a, b) in ((k, _halves(v)) for k, v in s.items())) + "}"
    src = SCANNER + f"_scan({needles})\n"
    # Sage preparses code; the scanner is plain Python, so it goes in as a string.
    return src if lang == "python" else f"exec({src!r})\n"


@pytest.mark.parametrize("plant_lang,scan_lang", [("python", "python"), ("shell", "python"), ("sage", "sage")])
def test_next_call_cannot_read_earlier_calls_from_memory(healthy, plant_lang, scan_lang):
    s = _secrets(plant_lang[:2].upper())
    r = healthy.run(_plant(plant_lang, s), plant_lang)
    assert ok(r) and r["stdout"].endswith("planted\n") and s["out"] in r["stdout"] and s["err"] in r["stderr"], r
    w1 = r["sandbox"]["warm"]
    r = healthy.run(_scan_code(scan_lang, s), scan_lang, timeout_s=120)
    assert ok(r), r
    w2 = r["sandbox"]["warm"]
    # the same worker (and so the same heap) served both calls
    assert (w2["worker_pid_inside"], w2["worker_jobs"]) == (w1["worker_pid_inside"], w1["worker_jobs"] + 1), (w1, w2)
    words = r["stdout"].split(None, 3)
    assert words[0] == "scanned" and int(words[1]) > 10 and int(words[2]) > 5, r["stdout"]
    assert words[3].strip() == "[]", f"call 2 found call 1's secrets in its memory: {words[3]}"
