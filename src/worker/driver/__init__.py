# sagebox driver: runs INSIDE the sandbox, never on the host.
#
#   python3 -I -c <bundle> worker KIND SHELL OWN_PIDNS WARM_BUDGET_MIB
#       A warm worker (KIND sage or python): import once, then fork one
#       child per job, speaking the framed protocol on stdin/stdout
#       (zygote.py, channel.py; docs/WARM.md).
#
#   python3 -I -c <bundle> fresh KIND SHELL OWN_PIDNS
#       The same worker for one job in a fresh sandbox (fresh isolation):
#       the job may come before `ready`; the worker exits after it.
#
# The modules, one concern each:
#   cell      how a job's code runs: Sage preparse, last-expression display,
#             tracebacks, the job's argv; source: a cell's source as the
#             REPL reads it (its name, the `;` rule, compiled); namespaces:
#             the globals it runs in (Sage's, plain Python's)
#   magics    IPython and Sage REPL syntax (%time, %display, !cmd, x?) through
#             IPython's own transformer, for a cell that does not compile;
#             pinfo: what x? and x?? print
#   channel   framing (length + JSON header + bytes) and moving a job's
#             bytes between fds with splice(2), never through our memory
#   confine   Landlock, prctl, rlimits, oom_score_adj: named constants
#   memory    resident-size reads, gc freeze, transparent huge pages
#   procs     reaping, the between-jobs process sweep, /proc/PID/stat
#   rmtree    removing whatever tree a job made, through fds, no recursion
#   janitor   the between-jobs file and IPC reset, in a process of its own
#   forker    (Python worker) forks the spares from a copy of the worker
#             that runs no Python; fork_loop.c is its loop
#   items     what a job displays, as records on a pipe of their own
#             under the host's caps (the kinds and caps come in the run
#             frame); figures: its figures (Sage show, plots as the last
#             expression, matplotlib) as PNGs; display: Sage's display
#             manager's backend (LaTeX, HTML, SVG, 3D scenes, text);
#             hooks: both installed once, inherited by every job
#   interact  Sage's @interact: its item around a first rendering, its
#             function kept in a session and run again with a viewer's
#             values; controls: the controls as data, checked and
#             converted; widgets: Sage's control functions and the rules
#             for plain defaults
#   zygote    the worker: set-up, the serve loop, spares, warm-ups; one
#             job (fresh)
#   job       one job in the worker: hand-over, output relay, deadline,
#             cancel, flood limits, the done frame
#   child     the job's process once forked: confine, reseed, pre-touch,
#             the jobs' cgroup, run the code, exit (also a session's
#             background job's exit)
#   session   a session's controller; background: its background jobs;
#             interp: its interpreter; files: its workspace paths
#   warmup    the idle warm-up steps (worker and session)
#   netrelay  with `network` set: 127.0.0.1:PORT to the sandbox's proxy socket
#   pipenv    with `network` set: pip installs into the workspace's .local,
#             importable at once (%pip, !pip, pip in a shell)
#   main      argv dispatch (main() runs only when bundle.py's loader calls it)
#
# The build joins them into one string for `python3 -c` (bundle.py, then
# embed.py, which fails the build when it would not fit on argv).


# True when bundle.py's loader took the modules' code from the host's
# precompiled file (SAGEBOX_DRIVER_CODE) instead of compiling them.
CODE_CACHED = False


def driver_code():
    """How this driver's modules were loaded, for the ready frame."""
    return "precompiled" if CODE_CACHED else "compiled"
