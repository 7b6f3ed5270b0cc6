"""The files a lint reads: what `git ls-files` lists in the source root.
Outside a git checkout there is no such list, and the lint skips (exit 77,
which meson counts as skipped) rather than read build trees and packages."""
import subprocess
import sys


def tracked(root, who):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"{who}: {root} is not a git checkout ({e}): no tracked files to read; skipped")
        sys.exit(77)
    return [p for p in out.decode().split("\0") if p]
