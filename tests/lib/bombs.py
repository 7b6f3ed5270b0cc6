"""The fork bombs the sandbox and warm suites both throw: the same code in a
fresh sandbox, a session and a warm worker, each held to its pids limit."""

# Forks until the kernel refuses (each child sleeps on), then prints how
# many it made and the errno that stopped it ("EAGAIN": the pids limit).
FORK_BOMB_PYTHON = r"""
import os, time, errno
n = 0
err = None
while n < 2000:
    try:
        pid = os.fork()
    except OSError as e:
        err = errno.errorcode.get(e.errno); break
    if pid == 0:
        time.sleep(30); os._exit(0)
    n += 1
print(n, err, flush=True)
os._exit(0)
"""

# The shell's own, then a line that runs only when the shell survived it.
FORK_BOMB_SHELL = ":(){ :|:& };:\nsleep 2\necho survived"
