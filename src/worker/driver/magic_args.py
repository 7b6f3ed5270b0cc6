"""What every magic shares: its one-line error, and its leading options
parsed as IPython's parse_options does."""


class UsageError(Exception):
    """A magic that cannot run here, said in one line (no traceback), as
    IPython says its own UsageError."""


def parse_options(line, spec):
    """A magic's leading options, as IPython's parse_options takes them
    (spec as getopt's: "n:r:q"): (options, the rest of the line as
    written)."""
    takes = {c: spec[i + 1:i + 2] == ":" for i, c in enumerate(spec) if c != ":"}
    rest, opts = line.lstrip(), {}
    while rest[:1] == "-" and rest[1:2].isalpha():
        word, _, rest = rest.partition(" ")
        rest = rest.lstrip()
        i = 1
        while i < len(word):
            c = word[i]
            if c not in takes:
                raise UsageError("option -%s not recognized (here: %s)"
                                 % (c, " ".join("-" + k for k in takes)))
            if not takes[c]:
                opts[c] = ""
                i += 1
                continue
            value = word[i + 1:]
            if not value:
                value, _, rest = rest.partition(" ")
                rest = rest.lstrip()
                if not value:
                    raise UsageError("option -%s needs a value" % c)
            opts[c] = value
            break
    return opts, rest
