#!/usr/bin/env python3
"""The settings part of the man page and the bash completion, made from what
`sagebox --help-settings` prints (the settings table of src/config/config.c),
so that a setting added to the table is in both without a second copy.

  from_help.py man        SAGEBOX TEMPLATE OUT [NAME=VALUE...]   @SETTINGS@ -> scdoc entries
  from_help.py completion SAGEBOX TEMPLATE OUT [NAME=VALUE...]   @SETTING_FLAGS@, @SETTING_VALUES@
  from_help.py config     SAGEBOX TEMPLATE OUT [NAME=VALUE...]   @SETTINGS@ -> commented defaults
  from_help.py markdown   SAGEBOX TEMPLATE OUT [NAME=VALUE...]   @SETTINGS@ -> docs/SETTINGS.md's entries

Each NAME=VALUE replaces @NAME@ too (the install paths).

tests/install/check.py imports settings() to test the built page against it,
and checks that docs/SETTINGS.md (the settings reference in the repository
and in the installed docs) is what the markdown mode makes of this binary.
"""
import re
import textwrap
import subprocess
import sys

# "  key   --flag   SAGEBOX_VAR" then "      help; allowed: RANGE; default: VALUE"
HEAD = re.compile(r"^  ([a-z_]+)\s+(--[a-z-]+)\s+(SAGEBOX_[A-Z_]+)\s*$")
BODY = re.compile(r"^      (.*); allowed: (.*); default: (.*)$")


def settings(sagebox):
    out = subprocess.run([sagebox, "--help-settings"], check=True, capture_output=True, text=True).stdout
    rows, lines = [], out.splitlines()
    for i, line in enumerate(lines):
        m = HEAD.match(line)
        if not m:
            continue
        b = BODY.match(lines[i + 1]) if i + 1 < len(lines) else None
        if not b:
            sys.exit(f"from_help.py: the help of setting {m.group(1)} is not 'HELP; allowed: ...; default: ...'")
        rows.append({"key": m.group(1), "flag": m.group(2), "var": m.group(3),
                     "help": b.group(1), "allowed": b.group(2), "default": b.group(3)})
    if not rows:
        sys.exit(f"from_help.py: no settings in the output of {sagebox} --help-settings")
    return rows


def choices(row):
    """The values of a setting that is a list (a|b|c), else None."""
    a = row["allowed"]
    return a.split("|") if re.fullmatch(r"[a-z0-9.]+(\|[a-z0-9.]+)+", a) else None


def scdoc_escape(s):
    # scdoc formats *bold* and _underline_ at word starts; a literal one is \*
    return re.sub(r"(?<![A-Za-z0-9])([*_])", r"\\\1", s)


def man(rows):
    out = []
    for r in rows:
        out.append(f"*{r['key']}* = _value_, *{r['flag']}* _value_, *{r['var']}*=_value_")
        out.append(f"\t{scdoc_escape(r['help'])}.")
        out.append(f"\tAllowed: {scdoc_escape(r['allowed'])}. Default: {scdoc_escape(r['default'])}.")
        out.append("")
    return "\n".join(out).rstrip("\n")


def completion(rows):
    flags = " ".join(r["flag"] for r in rows)
    cases = []
    for r in rows:
        c = choices(r)
        if c:
            cases.append(f"\t\t{r['flag']}) printf '%s\\n' {' '.join(c)} ;;")
    return flags, "\n".join(cases)


def config(rows):
    out = []
    for r in rows:
        d = r["default"]
        d = "" if d == "[]" else d[1:-1] if d.startswith('"') else d
        # Wrapped: inih reads at most 200 bytes of a line and takes the rest
        # as a line of its own (a long comment became "unknown setting").
        out += textwrap.wrap(f"{r['help']}; allowed: {r['allowed']}", 76, initial_indent="# ",
                             subsequent_indent="# ", break_on_hyphens=False)
        out.append(f"#{r['key']} = {d}".rstrip())
        out.append("")
    return "\n".join(out).rstrip("\n")


def markdown_escape(s):
    # *emphasis*, _emphasis_ at a word's start, and <tags> would be markup
    s = s.replace("<", "&lt;").replace("*", "\\*")
    return re.sub(r"(?<![A-Za-z0-9])_", r"\\_", s)


def markdown_value(v):
    """A default as a reader writes it: no JSON quotes; an empty one named."""
    if v in ('""', "[]"):
        return "none"
    return f"`{v[1:-1] if v.startswith(chr(34)) else v}`"


def markdown(rows):
    out = []
    for r in rows:
        out.append(f"### `{r['key']}`")
        out.append("")
        out.append(markdown_escape(r["help"]) + ".")
        out.append("")
        out.append(f"- allowed: {markdown_escape(r['allowed'])}")
        out.append(f"- default: {markdown_value(r['default'])}")
        out.append(f"- config file: `{r['key']} = VALUE`; command line: `{r['flag']} VALUE`; "
                   f"environment: `{r['var']}=VALUE`")
        out.append("")
    return "\n".join(out).rstrip("\n")


def main():
    mode, sagebox, template, out = sys.argv[1:5]
    rows = settings(sagebox)
    text = open(template).read()
    if mode == "man":
        text = text.replace("@SETTINGS@", man(rows))
    elif mode == "completion":
        flags, values = completion(rows)
        text = text.replace("@SETTING_FLAGS@", flags).replace("@SETTING_VALUES@", values)
    elif mode == "config":
        text = text.replace("@SETTINGS@", config(rows))
    elif mode == "markdown":
        text = text.replace("@SETTINGS@", markdown(rows))
    else:
        sys.exit(f"from_help.py: unknown mode {mode} (man, completion, config, markdown)")
    for a in sys.argv[5:]:
        name, _, value = a.partition("=")
        text = text.replace(f"@{name}@", value)
    left = re.findall(r"@[A-Z_]+@", text)
    if left:
        sys.exit(f"from_help.py: {template}: nothing replaces {', '.join(sorted(set(left)))}")
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
