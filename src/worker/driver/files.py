"""A session's workspace files, for the file_* tools: every path the host
names is resolved here, inside the session's own sandbox, beneath the
workspace's directory fd. The host never opens a path of the sandbox.

Safety by construction, not by checking: a path is opened with openat2(2)
RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV from the
workspace's fd, so the kernel refuses, during the one lookup that opens the
file, any step that would leave the workspace: `..` past its top, an
absolute symlink, a relative one that climbs out, /proc magic links, a
mount crossing. There is no check-then-open window for a symlink swapped
in by the session's own code. `..` in the path itself is refused outright
(it is never needed), and so is an absolute path outside /work. Where the
kernel has no openat2 (before 5.6, or a seccomp profile that refuses it),
each component is opened with O_NOFOLLOW from its parent's fd: every
symlink is then refused, even one that stays inside."""
import errno
import os
import stat

# The workspace's name inside the sandbox (the session's cwd).
WORKSPACE = "/work"

# openat2(2): the number is the same on every architecture (>= 424 are).
SYS_OPENAT2 = 437
RESOLVE_NO_XDEV = 0x01
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_BENEATH = 0x08
RESOLVE = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV

# file_list returns at most this many entries.
LIST_MAX = 1000
# A name longer than this is shown cut (a tmpfs name is at most 255 bytes).
NAME_SHOWN_MAX = 255


class PathError(Exception):
    """A path the tools refuse, or an operation that failed; the message is
    for the model that asked."""


class WorkspaceFull(PathError):
    pass


_openat2 = None


def _sys_openat2():
    """openat2 through libc's syscall(), or None where it cannot exist."""
    global _openat2
    if _openat2 is None:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        sc = libc.syscall
        sc.restype = ctypes.c_long

        class OpenHow(ctypes.Structure):
            _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

        def call(dirfd, path, flags, mode):
            how = OpenHow(flags, mode, RESOLVE)
            fd = sc(ctypes.c_long(SYS_OPENAT2), ctypes.c_int(dirfd), ctypes.c_char_p(path),
                    ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
            if fd < 0:
                e = ctypes.get_errno()
                raise OSError(e, os.strerror(e))
            return fd
        _openat2 = call
    return _openat2


def split(path, root=WORKSPACE):
    """A workspace path as its components (relative to the workspace), or
    PathError. Relative paths are relative to the workspace; absolute ones
    must be /work or below it (root: the workspace's real path, when it is
    not /work, is accepted too)."""
    if not isinstance(path, str) or "\0" in path:
        raise PathError("the path must be text without NUL characters")
    p = path
    for top in {WORKSPACE, root}:
        if p == top or p.startswith(top + "/"):
            p = p[len(top):]
            break
    else:
        if p.startswith("/"):
            raise PathError("%r is outside the workspace: use a path relative to %s, or one under %s/"
                            % (path, WORKSPACE, WORKSPACE))
    parts = [_unescape(c) for c in p.split("/") if c not in ("", ".")]
    if ".." in parts:
        raise PathError("%r contains '..': workspace paths may not climb directories" % path)
    return parts


def _unescape(name):
    """A name as the file tools show it back to its bytes: a name that is
    not UTF-8 is shown with each byte that is not as \\xNN (channel.text),
    since a frame's JSON can only carry text. A name whose \\xNN escapes
    make valid UTF-8 is taken as written (those are not how a name is
    shown)."""
    if "\\x" not in name:
        return name
    import re
    raw = re.sub(rb"\\x([0-9a-fA-F]{2})", lambda m: bytes([int(m.group(1), 16)]),
                 name.encode("utf-8", "surrogateescape"))
    try:
        raw.decode("utf-8")
        return name
    except UnicodeDecodeError:
        return raw.decode("utf-8", "surrogateescape")


def shown(parts):
    """How the model sees a path: /work/a/b."""
    return "/".join([WORKSPACE] + parts)


def explain(e, what, parts):
    """An OSError from opening a workspace path, as a PathError."""
    p = shown(parts)
    if e.errno == errno.EXDEV:
        return PathError("%s leads outside the workspace (through a symbolic link, or .. past its top): "
                         "refused" % p)
    if e.errno == errno.ELOOP:
        return PathError("%s is (or passes through) a symbolic link that cannot be followed here" % p)
    if e.errno == errno.ENOENT:
        return PathError("%s does not exist" % p)
    if e.errno == errno.ENOTDIR:
        return PathError("a component of %s is not a directory" % p)
    if e.errno == errno.EISDIR:
        return PathError("%s is a directory" % p)
    if e.errno == errno.ENOSPC:
        return WorkspaceFull("the workspace is full (no space or no inodes left) while %s %s" % (what, p))
    if e.errno in (errno.EACCES, errno.EPERM):
        return PathError("permission denied: %s" % p)
    if e.errno == errno.ENXIO:
        return PathError("%s is not a regular file" % p)
    return PathError("%s %s failed: %s" % (what, p, os.strerror(e.errno)))


def _nofollow(name, flags, mode, dirfd):
    """open name in dirfd with O_NOFOLLOW; a symlink is ELOOP whatever
    the other flags made of it (O_DIRECTORY says ENOTDIR)."""
    try:
        return os.open(name, flags | os.O_NOFOLLOW, mode, dir_fd=dirfd)
    except OSError as e:
        if e.errno in (errno.ENOTDIR, errno.ELOOP):
            try:
                if stat.S_ISLNK(os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_mode):
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP)) from None
            except FileNotFoundError:
                pass
        raise


class Workspace:
    def __init__(self, root):
        self.root = root
        self.fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        self.beneath = self._probe()

    def _probe(self):
        """Whether openat2 works here (kernel >= 5.6, allowed by seccomp)."""
        try:
            os.close(_sys_openat2()(self.fd, b".", os.O_PATH | os.O_CLOEXEC, 0))
            return True
        except (OSError, AttributeError):
            return False

    def close(self):
        os.close(self.fd)

    def _walk_open(self, parts, flags, mode):
        """The fallback: one component at a time, never following a
        symlink (O_NOFOLLOW on every step, O_DIRECTORY on the parents)."""
        cur = os.dup(self.fd)
        try:
            for c in parts[:-1]:
                nxt = _nofollow(c, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC, 0, cur)
                os.close(cur)
                cur = nxt
            return _nofollow(parts[-1] if parts else ".", flags, mode, cur)
        finally:
            os.close(cur)

    def open(self, parts, flags, mode=0o644):
        """An fd for the workspace path parts (OSError as the kernel said)."""
        # (openat2 allows only O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC with O_PATH)
        flags |= os.O_CLOEXEC | (0 if flags & os.O_PATH else os.O_NOCTTY)
        rel = "/".join(parts) or "."
        if self.beneath:
            # openat2 refuses a mode without O_CREAT (EINVAL)
            mode = mode if flags & os.O_CREAT else 0
            return _sys_openat2()(self.fd, rel.encode("utf-8", "surrogateescape"), flags, mode)
        return self._walk_open(parts, flags, mode)

    def _mkdirs(self, parts):
        """Create the directories parts[:-1] as needed, each one made in a
        parent that was itself opened beneath the workspace."""
        for i in range(len(parts) - 1):
            try:
                parent = self.open(parts[:i], os.O_PATH | os.O_DIRECTORY)
            except OSError as e:
                raise explain(e, "creating", parts[:i + 1]) from None
            try:
                os.mkdir(parts[i], 0o755, dir_fd=parent)
            except FileExistsError:
                pass
            except OSError as e:
                raise explain(e, "creating", parts[:i + 1]) from None
            finally:
                os.close(parent)

    def _regular(self, fd, parts):
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise PathError("%s is not a regular file" % shown(parts))
        return st

    def write(self, path, data, append=False):
        """Write data to a file (created with its parent directories, or
        replaced; appended to with append). A symlink as the last component
        is refused; a fifo or device is refused without blocking. Returns
        (shown path, bytes written). WorkspaceFull when the workspace's size
        cap was hit; the incomplete file is then removed."""
        parts = split(path, self.root)
        if not parts:
            raise PathError("name a file to write, e.g. notes.txt or /work/data/x.csv")
        self._mkdirs(parts)
        flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW | (os.O_APPEND if append else os.O_TRUNC)
        try:
            fd = self.open(parts, flags)
        except OSError as e:
            raise explain(e, "writing", parts) from None
        self._regular(fd, parts)
        view = memoryview(data)
        written = 0
        try:
            while written < len(data):
                written += os.write(fd, view[written:])
        except OSError as e:
            err = explain(e, "writing", parts)
            if isinstance(err, WorkspaceFull) and not append:
                self._remove_incomplete(parts)
                err = WorkspaceFull("%s: %d of %d bytes fit; the incomplete file was removed"
                                    % (err, written, len(data)))
            raise err from None
        finally:
            os.close(fd)
        return shown(parts), written

    def _remove_incomplete(self, parts):
        try:
            parent = self.open(parts[:-1], os.O_PATH | os.O_DIRECTORY)
        except OSError:
            return
        try:
            os.unlink(parts[-1], dir_fd=parent)
        except OSError:
            pass
        finally:
            os.close(parent)

    def open_read(self, path):
        """(fd, stat, parts) of a regular file, for reading."""
        parts = split(path, self.root)
        try:
            fd = self.open(parts, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as e:
            raise explain(e, "reading", parts) from None
        return fd, self._regular(fd, parts), parts

    def list(self, path):
        """(shown path, entries, cut): a directory's entries, sorted by
        name, without following symlinks; each {name, type, size, mtime}."""
        parts = split(path or ".", self.root)
        try:
            fd = self.open(parts, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as e:
            raise explain(e, "listing", parts) from None
        out = []
        cut = False
        try:
            with os.scandir(fd) as it:
                for ent in it:
                    if len(out) >= LIST_MAX:
                        cut = True
                        break
                    try:
                        st = ent.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    out.append({"name": os.fsdecode(ent.name)[:NAME_SHOWN_MAX], "type": kind(st.st_mode),
                                "size": st.st_size, "mtime": int(st.st_mtime)})
        finally:
            os.close(fd)
        out.sort(key=lambda e: e["name"])
        return shown(parts), out, cut


def kind(mode):
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"
