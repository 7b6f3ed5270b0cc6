#!/bin/sh
# meson test: one pytest suite, with the pytest found when the suite runs,
# not when meson configures: a pytest missing then is this suite's failure
# naming the fix, never a suite left out. Debian's python3 first
# (python3-pytest installs there), then python3 on PATH. -rfEs lists every
# failed, erroring and skipped test on one line each (skips with their
# reason): scripts/test counts the skips and names the first failure in
# its closing lines, which are all CI's record keeps.
#   tests/lib/pytest.sh DIR [pytest args...]
for py in /usr/bin/python3 python3; do
	if "$py" -c 'import pytest' 2>/dev/null; then
		exec "$py" -m pytest -q -rfEs -p no:cacheprovider "$@"
	fi
done
echo "pytest is not installed: run scripts/install-deps --test" >&2
exit 1
