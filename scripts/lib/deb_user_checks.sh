#!/bin/bash
# What a new user of the installed Debian package does, from /usr/bin/sagebox
# (scripts/fresh-check --deb runs this as a normal user in a fresh Debian 12
# root): the man page, completion, `sagebox self-test`, one MCP call over
# stdio. Prints one line per check; exits 1 if any failed.
set -uo pipefail
failed=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failed=1; }

[ "$(command -v sagebox)" = /usr/bin/sagebox ] && ok "sagebox is /usr/bin/sagebox" || fail "sagebox on PATH is '$(command -v sagebox)'"

page=$(MANWIDTH=80 man -P cat sagebox 2>&1)
grep -q "sagebox - run SageMath" <<<"$page" && grep -q "EXIT STATUS" <<<"$page" &&
	ok "man sagebox shows the page ($(wc -l <<<"$page") lines)" || fail "man sagebox: $(head -n 3 <<<"$page")"

# bash-completion's own loader finds the completion where the package put it
got=$(bash --norc -c 'source /usr/share/bash-completion/bash_completion || exit 3
	_completion_loader sagebox
	spec=$(complete -p sagebox) || exit 3
	fn=$(sed -E "s/.*-F ([^ ]+).*/\1/" <<<"$spec")
	COMP_WORDS=(sagebox ""); COMP_CWORD=1; COMPREPLY=()
	"$fn" sagebox "" sagebox
	echo "${COMPREPLY[*]}"' 2>&1)
want="run status self-test mcp image policy --help --help-settings --version"
[ "$got" = "$want" ] && ok "sagebox <TAB> completes: $got" || fail "sagebox <TAB>: '$got', expected '$want'"

out=$(sagebox self-test 2>&1); rc=$?
[ $rc = 0 ] && ok "sagebox self-test: $(head -n 1 <<<"$out")" || fail "sagebox self-test exit $rc: $out"

# One MCP call over stdio: initialize, then run_sagemath; stdin stays open
# until the answer came (at EOF the server cancels calls not yet started).
coproc MCP { sagebox mcp 2>"$HOME/mcp.err"; }
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"deb-check","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_sagemath","arguments":{"code":"R.<x> = QQ[]\nprint(factor(x^4 - 1))"}}}' >&"${MCP[1]}"
answer=
while IFS= read -r -t 180 line <&"${MCP[0]}"; do
	case $line in *'"id":2'*) answer=$line; break ;; esac
done
exec {MCP[1]}>&-
wait "$MCP_PID" 2>/dev/null
[[ $answer == *'(x - 1) * (x + 1) * (x^2 + 1)'* && $answer != *'"isError":true'* ]] &&
	ok "MCP tools/call run_sagemath over stdio: ${answer:0:160}" || fail "MCP call: '${answer:0:400}' $(tail -n 5 "$HOME/mcp.err")"

exit $failed
