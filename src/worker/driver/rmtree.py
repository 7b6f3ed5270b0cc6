"""Removing whole trees that a job made, whatever they are: through
directory fds (openat, unlinkat), never following a symlink, never
recursing, within a time budget. Used by the janitor (janitor.py)."""
import errno
import os
import stat
import time

# The most directory fds the remover holds while it descends; a deeper
# subtree is moved up (renamed into the directory being emptied) and
# removed from there, so no depth exhausts fds, the stack or PATH_MAX.
HOIST_DEPTH = 32
# A directory we empty must be listable and writable by us.
DIR_MODE_TO_EMPTY = 0o700
O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class OutOfTime(Exception):
    pass


class Remover:
    """Removes whole subtrees through directory fds (openat, unlinkat),
    never following a symlink, never recursing."""

    def __init__(self, deadline):
        self.deadline = deadline
        self.hoisted = 0
        self.failed = []    # (what, errno) of entries that could not go

    def _check_time(self):
        if time.monotonic() > self.deadline:
            raise OutOfTime()

    def entry(self, dfd, name):
        """Remove the entry `name` of the directory dfd, whatever it is."""
        try:
            st = os.lstat(name, dir_fd=dfd)
        except FileNotFoundError:
            return
        except OSError as e:
            self.failed.append(("lstat", e.errno))
            return
        if not stat.S_ISDIR(st.st_mode):
            try:
                os.unlink(name, dir_fd=dfd)
            except OSError as e:
                self.failed.append(("unlink", e.errno))
            return
        self._tree(dfd, name)

    def _open_dir(self, dfd, name):
        # No job process is left to race with (they were swept), so making
        # the directory ours to empty is safe.
        os.chmod(name, DIR_MODE_TO_EMPTY, dir_fd=dfd)
        return os.open(name, O_DIR, dir_fd=dfd)

    def _hoist_name(self, dfd):
        while True:
            self.hoisted += 1
            name = ".sagebox-janitor-%d" % self.hoisted
            try:
                os.lstat(name, dir_fd=dfd)
            except FileNotFoundError:
                return name

    def _tree(self, top, name):
        todo = [name]        # directories in `top` still to remove
        retries = 0
        while todo:
            self._check_time()
            nm = todo.pop()
            try:
                stack = [[self._open_dir(top, nm), None, nm]]
            except OSError as e:
                self.failed.append(("open", e.errno))
                continue
            try:
                while stack:
                    self._check_time()
                    level = stack[-1]
                    if level[1] is None:
                        level[1] = os.scandir(level[0])
                    ent = next(level[1], None)
                    if ent is not None:
                        self._one(stack, top, todo, ent)
                        continue
                    level[1].close()
                    os.close(level[0])
                    stack.pop()
                    parent = stack[-1][0] if stack else top
                    try:
                        os.rmdir(level[2], dir_fd=parent)
                    except OSError as e:
                        # ENOTEMPTY: an entry the listing missed; again,
                        # a bounded number of times.
                        if retries < 3 and e.errno == errno.ENOTEMPTY:
                            retries += 1
                            if stack:
                                stack.append([self._open_dir(parent, level[2]), None, level[2]])
                            else:
                                todo.append(level[2])
                        else:
                            self.failed.append(("rmdir", e.errno))
            finally:
                for level in stack:
                    if level[1] is not None:
                        level[1].close()
                    os.close(level[0])

    def _one(self, stack, top, todo, ent):
        dfd = stack[-1][0]
        try:
            is_dir = ent.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if not is_dir:
            try:
                os.unlink(ent.name, dir_fd=dfd)
            except FileNotFoundError:
                pass
            except OSError as e:
                self.failed.append(("unlink", e.errno))
            return
        if len(stack) >= HOIST_DEPTH:
            new = self._hoist_name(top)
            try:
                os.rename(ent.name, new, src_dir_fd=dfd, dst_dir_fd=top)
                todo.append(new)
            except OSError as e:
                self.failed.append(("rename", e.errno))
            return
        try:
            stack.append([self._open_dir(dfd, ent.name), None, ent.name])
        except OSError as e:
            self.failed.append(("open", e.errno))
