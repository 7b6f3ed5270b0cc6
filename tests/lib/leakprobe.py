"""Plant secrets in one warm call and look for them in the next call's
whole address space: shared by tests/warm (native) and
tests/podman. A Python or Sage call also displays a figure whose PNG holds a
secret (a tEXt chunk): figure bytes travel like output, spliced by the
worker, never held by it. The next call's own code must hold the secrets too, to
search for them, so it holds each as two halves and counts a hit only where
the halves are adjacent in memory."""
import secrets

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


def halves(s):
    return s[:len(s) // 2], s[len(s) // 2:]


def new_secrets(tag):
    return {k: f"SB{tag}{k.upper()}{secrets.token_hex(12)}" for k in ("code", "out", "err", "fname", "fdata", "fig")}


def plant(lang, s):
    """Code for call 1: s['code'] appears whole only in the code; the
    others only in what the job produces (output, a file's name and
    contents), built from halves at run time."""
    h = {k: halves(v) for k, v in s.items()}
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
            # a figure left open: the driver draws it through savefig,
            # which writes the metadata into the PNG as is
            "import functools, matplotlib.pyplot as plt\n"
            "_f = plt.figure(figsize=(1, 1))\n"
            f"_f.savefig = functools.partial(_f.savefig, metadata={{'Title': {h['fig'][0]!r} + {h['fig'][1]!r}}})\n"
            "print('planted')\n")


def scan_code(lang, s):
    needles = "{" + ", ".join(f"{k!r}: ({a.encode()!r}, {b.encode()!r})"
                              for k, (a, b) in ((k, halves(v)) for k, v in s.items())) + "}"
    src = SCANNER + f"_scan({needles})\n"
    # Sage preparses code; the scanner is plain Python, so it goes in as a string.
    return src if lang == "python" else f"exec({src!r})\n"



def figure_holds(result, s):
    """Whether a tools/call result of plant() carries the figure with the
    secret (so a scan that misses it would mean something)."""
    import base64
    images = [base64.b64decode(c["data"]) for c in result["content"] if c["type"] == "image"]
    return len(images) == 1 and images[0].startswith(b"\x89PNG") and s["fig"].encode() in images[0]


def check_scan(stdout):
    """The scan's verdict: the names of the secrets found (none, we hope),
    after checking that it really read a good part of the address space."""
    words = stdout.split(None, 3)
    assert words[0] == "scanned" and int(words[1]) > 10 and int(words[2]) > 5, stdout
    return words[3].strip()


CASES = [("python", "python"), ("shell", "python"), ("sage", "sage")]
