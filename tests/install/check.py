#!/usr/bin/env python3
"""What `meson install` adds beside the binary, checked against the binary
itself: the man page names every command, flag, MCP tool and
setting (with its range and default) that `sagebox --help`, `CMD --help` and
`--help-settings` print; bash completion completes the commands, each
command's flags and the values of the settings that are a list; the example
config, uncommented, is accepted; systemd-analyze verify passes on the units;
the settings reference in the repository (docs/SETTINGS.md) is the page
made from this binary's `--help-settings`, and the man page points to the
installed docs.

  check.py SAGEBOX MAN_PAGE COMPLETION CONFIG SYSTEM_UNIT USER_UNIT SYSUSERS BUILT_SETTINGS_MD REPO_SETTINGS_MD
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../dist"))
import from_help  # noqa: E402

sagebox, man_page, completion, config, system_unit, user_unit, sysusers, built_md, repo_md = sys.argv[1:10]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, **kw)


def roff_text(path):
    """The page's words: roff requests dropped, font changes and escapes undone."""
    out = []
    for line in open(path):
        if line.startswith((".", "'")) and not line.startswith(".\\&"):
            continue
        line = re.sub(r"\\f[BIRP]", "", line)
        line = line.replace("\\&", "").replace("\\*(Aq", "'").replace("\\(aq", "'").replace("\\e", "\\")
        out.append(line.strip())
    return re.sub(r"\s+", " ", " ".join(out))


def help_of(*cmd):
    r = run(sagebox, *cmd, "--help")
    return r.stdout + r.stderr


def commands():
    """The commands `sagebox --help` lists."""
    text = help_of()
    block = text.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def flags_of(*cmd):
    """The flags CMD --help names (not '--x=' in prose, not the global --help-settings)."""
    found = re.findall(r"(?<![\w-])(--[a-z][a-z-]*[a-z])(?![\w=-])", help_of(*cmd))
    return sorted(set(found) - {"--help", "--help-settings"})


settings = from_help.settings(sagebox)
cmds = commands()
check(set(cmds) >= {"run", "status", "self-test", "mcp", "image", "policy"}, f"sagebox --help lists the commands: {cmds}")

# --- the man page -----------------------------------------------------------
if not os.path.exists(man_page):
    check(False, f"the man page {man_page} was built (it needs scdoc: scripts/install-deps installs it)")
else:
    page = roff_text(man_page)
    raw = open(man_page).read()
    section = raw.split("\n.SH COMMANDS\n", 1)[-1].split("\n.SH ", 1)[0]
    for c in cmds:
        check(re.search(rf"^\\fB{re.escape(c)}[\\ ]", section, re.M) is not None,
              f"man page: command {c} has its entry under COMMANDS")
    for c in cmds:
        for f in flags_of(c):
            check(f in page, f"man page: '{c} {f}'")
    tools = re.search(r"Tools: (.*?)\. Every", help_of("mcp").replace("\n", " ")).group(1)
    for t in re.split(r",\s*", tools):
        check(t in page, f"man page: MCP tool {t}")
    for s in settings:
        for field in ("key", "flag", "var"):
            check(s[field] in page, f"man page: setting {s['key']}: {field} {s[field]}")
        check(f"Allowed: {s['allowed']}. Default: {s['default']}." in page,
              f"man page: setting {s['key']}: allowed {s['allowed']}, default {s['default']}")
    for section in ("EXIT STATUS", "FILES", "ENVIRONMENT", "SECURITY", "EXAMPLES"):
        check(f"\n.SH {section}\n" in open(man_page).read(), f"man page: section {section}")
    for code in ("124", "125", "128"):
        check(code in page, f"man page: exit status {code}")
    for doc in ("README.md", "docs/USER.md", "docs/SECURITY.md", "docs/SETTINGS.md"):
        check(doc in page, f"man page: points to the installed {doc}")
    if shutil.which("man"):
        r = run("man", "--warnings", "-l", man_page, env=dict(os.environ, MANWIDTH="80"))
        check(r.returncode == 0 and not r.stderr.strip(), f"man -l renders the page without warnings {r.stderr.strip()[:300]}")

# --- the settings reference -------------------------------------------------
built, repo = open(built_md).read(), open(repo_md).read()
if built != repo:
    import difflib
    diff = "".join(list(difflib.unified_diff(repo.splitlines(True), built.splitlines(True), repo_md, built_md))[:40])
    print(diff)
check(built == repo, f"docs/SETTINGS.md is what this binary's --help-settings makes (else: cp {built_md} {repo_md})")

# --- bash completion --------------------------------------------------------
def complete(*words):
    script = (f"source {completion!r}\nCOMP_WORDS=(sagebox {' '.join(repr(w) for w in words)})\n"
              "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n_sagebox\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    r = run("bash", "--norc", "-c", script)
    if r.returncode != 0:
        return {"<bash failed: " + r.stderr.strip() + ">"}
    return set(r.stdout.split())


got = complete("")
check(set(cmds) <= got, f"completion: 'sagebox <TAB>' gives every command (got {sorted(got)})")
for c in cmds:
    want = set(flags_of(c)) | ({s["flag"] for s in settings} if c in ("run", "status", "self-test", "mcp") else set())
    got = complete(*(["image", "build"] if c == "image" else [c]), "--")
    check(want <= got, f"completion: 'sagebox {c} --<TAB>' gives its flags (missing {sorted(want - got)})")
for s in settings:
    values = from_help.choices(s)
    if values:
        got = complete("run", s["flag"], "")
        check(got == set(values), f"completion: '{s['flag']} <TAB>' gives {values} (got {sorted(got)})")
check(complete("run", "--lang", "") == {"sage", "python", "shell"}, "completion: '--lang <TAB>'")

# --- the example config -----------------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    text = open(config).read()
    keys = re.findall(r"^#([a-z_]+) =", text, re.M)
    check(sorted(keys) == sorted(s["key"] for s in settings), "example config: every setting, once")
    live = os.path.join(tmp, "config.ini")
    with open(live, "w") as f:
        f.write(re.sub(r"^#([a-z_]+ = )", r"\1", text, flags=re.M))
    r = run(sagebox, "run", "--config", live, "--help")
    check(r.returncode == 0, f"example config, every setting uncommented at its default, is accepted {r.stderr.strip()}")

    # --- the units ----------------------------------------------------------
    if not shutil.which("systemd-analyze"):
        check(False, "systemd-analyze is installed (Debian: systemd; scripts/install-deps --test)")
    else:
        # verify wants ExecStart's program to exist: the built one stands in.
        for name, unit, user in (("system", system_unit, []), ("user", user_unit, ["--user"])):
            d = os.path.join(tmp, name)
            os.makedirs(d)
            dst = os.path.join(d, "sagebox.service")
            body = open(unit).read()
            exe = re.search(r"^ExecStart=(\S+)", body, re.M).group(1)
            with open(dst, "w") as f:
                f.write(body.replace(f"ExecStart={exe}", f"ExecStart={os.path.abspath(sagebox)}"))
            env = dict(os.environ, SYSTEMD_LOG_LEVEL="notice")
            if user:
                env.setdefault("XDG_RUNTIME_DIR", tmp)
            r = run("systemd-analyze", *user, "verify", "--man=no", dst, env=env)
            out = (r.stdout + r.stderr).strip()
            check(r.returncode == 0 and "sagebox.service" not in out, f"systemd-analyze {' '.join(user)} verify: {name} unit {out[:500]}")
        # the unit's user exists once sysusers runs
        root = os.path.join(tmp, "root")
        os.makedirs(os.path.join(root, "etc"))
        if shutil.which("systemd-sysusers"):
            r = run("systemd-sysusers", f"--root={root}", os.path.abspath(sysusers))
            passwd = open(os.path.join(root, "etc/passwd")).read() if os.path.exists(os.path.join(root, "etc/passwd")) else ""
            check(r.returncode == 0 and re.search(r"^sagebox:x:\d+:\d+:.*:/var/lib/sagebox:", passwd, re.M) is not None,
                  f"systemd-sysusers makes the user sagebox {r.stderr.strip()}")
        check(re.search(r"^User=sagebox$", open(system_unit).read(), re.M) is not None, "system unit runs as sagebox")

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
