/* The server's instructions: what a model should know to use the tools well.
 * Clients may put this in the system prompt, so it is short and concrete.
 * It speaks of the tools by name: that is why it lives with them. */
#include <stdio.h>
#include <stdlib.h>

#include "core/display_caps.h"
#include "core/limits.h"
#include "packages/packages.h"
#include "tools/sessions.h"
#include "tools/tool.h"

char *sb_tools_instructions(const struct sb_config *cfg)
{
	char *s = NULL, net[1400], pk[SB_PACKAGES_TEXT_MAX], bullet[SB_PACKAGES_TEXT_MAX + 4] = "";
	char *kept = sb_workspaces_model_text(cfg);
	sb_netlist_model_text(&cfg->net, net, sizeof net);
	sb_packages_model_text(pk);
	if (pk[0])
		snprintf(bullet, sizeof bullet, "- %s\n", pk);
	if (asprintf(&s,
		     "sagebox runs code in an isolated sandbox on the user's machine. Use run_sagemath for "
		     "mathematics (exact arithmetic, algebra, factoring, number theory, calculus, linear algebra, "
		     "combinatorics): compute answers instead of guessing them. run_python runs plain Python 3; "
		     "run_shell runs a shell script.\n"
		     "- Output: only what the code prints comes back, plus the value of a bare expression on the "
		     "last line. Print every value you need, e.g. print(f.factor()).\n"
		     "- A call without session_id starts fresh: nothing survives it, so define all variables, rings "
		     "and functions in the same call. That is the simplest way for a one-off question.\n"
		     "- For iterative work, large objects you build once, plots and files, or long computations, "
		     "open a session (session_open, lang sage, python or shell) and pass its session_id to the run "
		     "tools: variables, functions and imports (a shell's cwd and exports) and files in /work persist "
		     "between calls (file_write, file_read, file_list). A session unused for %u minutes is closed "
		     "with everything in it; close it yourself with session_close when done. An interrupted call "
		     "keeps the session's state; the result says plainly when it was lost.\n"
		     "- Work that spans days: session_open {lang, workspace: \"NAME\"} keeps /work on disk under "
		     "NAME (saved after every call, back at the next open of NAME, also after sagebox restarts); "
		     "session_save keeps the variables too, and session_open {workspace, restore: true} loads "
		     "them. workspace_list shows the workspaces kept. %s\n"
		     "- Computations longer than a call should take: job_start (with a session_id to use the "
		     "session's variables), then job_status and job_output; they run up to %u s.\n"
		     "- Sage syntax: R.<x> = QQ[] makes a polynomial ring over the rationals (ZZ, GF(p), "
		     "NumberField also work); x = var('x') makes a symbolic variable for solve, diff, integrate, "
		     "limit; ^ is a power; 1/3 is exact, use n(expr, digits=30) or RR for decimals; "
		     "matrix(QQ, [[1,2],[3,4]]); factor(n), is_prime(n), gcd, EllipticCurve([a,b]).\n"
		     "- Plots: show(p), p.show(), a plot on the last line or matplotlib's plt.show() return the "
		     "figure as a PNG image (at most %u per call, %u px on the long side), named in the text as "
		     "[figure 1: 628×468 PNG]. The user may see an image that you do not: describe a plot from "
		     "the data you computed, not from its picture.\n"
		     "- Sage's @interact works (slider, range_slider, selector, checkbox, input_box, input_grid, "
		     "color_selector, or plain defaults such as n=5 or f=['sin','cos']): in a session, hosts that show "
		     "sagebox's viewer give the user the controls, and each move runs the function again in the "
		     "session; without a session only its first rendering is shown.\n"
		     "- Limits: %u s per call by default (timeout_seconds up to %d), %s of memory, %zu KiB of "
		     "output per stream, %d characters of code. Prefer printing sizes or a few terms over huge "
		     "objects.\n"
		     "- %s. No access to the user's files%s%s; only /tmp "
		     "(and a session's /work) is writable, and it is discarded after the call (the session; a "
		     "named workspace's /work is kept).\n"
		     "%s"
		     "- A result with isError true either shows your code's error (read the traceback, fix the "
		     "code, call again) or says the sandbox itself failed: then call sandbox_status (and "
		     "sandbox_self_test if needed) and tell the user what it reports instead of retrying.",
		     cfg->session_idle_minutes, kept ? kept : "", cfg->job_timeout_s,
		     sb_display_classes[SB_DCLASS_FIGURE].caps.max_count, (unsigned)sb_display_max_side, cfg->limits.timeout_s, SB_TIMEOUT_MAX_S,
		     cfg->limits.memory, cfg->limits.output_bytes / 1024, SB_CODE_MAX_CHARS,
		     net, cfg->n_shares ? " (except the directories the user shared, read-only under /data)" : "",
		     cfg->project_dir[0] && !cfg->http_clients
			     ? " but the user's project folder, read-write at /work/project in sessions (what you "
			       "write there is the user's: say what you changed)"
			     : "",
		     bullet) < 0)
		s = NULL;
	free(kept);
	return s;
}
