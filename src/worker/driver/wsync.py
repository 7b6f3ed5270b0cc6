"""A named workspace's files between the session and the host's store on
disk (src/workspaces/ on the host): the controller writes what the host
restores into /work, and after each call sends what changed since the last
sync. The host checks every op again and writes only regular files and
directories beneath the store; this side decides what travels.

  host -> controller                       controller -> host
  put {id, kind: dir, path}                (nothing until end)
  put {id, kind: file, path, exec, size}
  put {id, kind: data, offset,
       code_bytes} + bytes
  put {id, kind: end}                      reply {id, ok, files, dirs, bytes,
                                                  errors: [{path, why}]}
  sync {id, full}                          data {id, op: del, path}
                                           data {id, op: dir, path, mode}
                                           data {id, op: file, path, mode, size}
                                           data {id, op: data, offset} + bytes
                                           data {id, op: skip, path, why}
                                           reply {id, ok, files, bytes}
  synced {id, ok}                          (the host kept sync id: it is the
                                           base of the next; else the next
                                           sends the same again)

What is kept: regular files (their data; holes stay holes) and directories,
and whether a file is executable. Not kept, and said once each: symbolic
links, FIFOs, sockets, device nodes, a hard-linked file's other names (its
data is kept once, under its first name in sorted order), names that are not
UTF-8 text or hold control characters, and anything on another filesystem
mounted beneath /work (the user's project folder is not part of the
workspace). Changes are found by (inode, size, mtime, ctime, executable):
ctime is the kernel's, so a file the code rewrote and touched back is still
seen as changed."""
import errno
import os
import stat

# A data frame's bytes at most (the host's frame limit is 256 KiB).
CHUNK = 1 << 16
# Entries kept at most (the host refuses more; the tmpfs has as many inodes).
ENTRIES_MAX = 65536
# The longest relative path the host takes.
PATH_MAX = 4095
# The largest apparent size of a file kept (SB_WS_FILE_MAX: a sparse file
# may be larger than the workspace's cap).
FILE_MAX = 1 << 40


def _why_not_name(rel):
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not UTF-8 text: not kept"
    if any(ord(c) < 0x20 or ord(c) == 0x7f for c in rel):
        return "its name holds control characters: not kept"
    if len(rel.encode("utf-8")) > PATH_MAX:
        return "its path is longer than %d bytes: not kept" % PATH_MAX
    return None


def _kind(mode):
    if stat.S_ISLNK(mode):
        return "a symbolic link: not kept (links are never followed or recreated)"
    if stat.S_ISFIFO(mode):
        return "a FIFO: not kept"
    if stat.S_ISSOCK(mode):
        return "a socket: not kept"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device node: not kept"
    return "not a regular file or directory: not kept"


def scan(root, quiet_top=()):
    """({rel: key}, {rel: why}) of the tree at root: key ("d",) for a
    directory, ("f", ino, size, mtime_ns, ctime_ns, exec) for a file; why
    for what is not kept. Top-level names in quiet_top on another
    filesystem (the project folder) are left out without a word."""
    top_dev = os.stat(root).st_dev
    out, skipped, inodes = {}, {}, {}
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as it:
                ents = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for e in ents:
            rel = rel_dir + "/" + e.name if rel_dir else e.name
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            why = _why_not_name(rel)
            if why:
                skipped[rel] = why
                continue
            if stat.S_ISDIR(st.st_mode):
                if st.st_dev != top_dev:
                    if not (not rel_dir and e.name in quiet_top):
                        skipped[rel] = "another filesystem mounted here: not kept"
                    continue
                out[rel] = ("d",)
                subdirs.append(rel)
            elif stat.S_ISREG(st.st_mode):
                if st.st_size > FILE_MAX:
                    skipped[rel] = "larger than 1 TiB (its apparent size): not kept"
                    continue
                if st.st_nlink > 1:
                    inodes.setdefault(st.st_ino, []).append(rel)
                out[rel] = ("f", st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, bool(st.st_mode & 0o111))
            else:
                skipped[rel] = _kind(st.st_mode)
            if len(out) > ENTRIES_MAX:
                out.pop(rel)
                skipped[rel] = "more than %d files and directories: not kept" % ENTRIES_MAX
        # depth first, in sorted order (a directory before what it holds)
        stack.extend(reversed(subdirs))
    for names in inodes.values():
        first = min(names)
        for rel in names:
            if rel != first:
                del out[rel]
                skipped[rel] = "another name of %s (a hard link): its data is kept once, there" % first
    return out, skipped


class Mirror:
    """The controller's side of one workspace: what the host's store holds
    (as far as this side knows), a restore in progress, the skips said."""

    def __init__(self, ws, root, quiet_top=()):
        self.ws, self.root, self.quiet_top = ws, root, tuple(quiet_top)
        self.base = None        # {rel: key} the host has; None: unknown (a full sync)
        self.pending = {}       # request id -> what that sync sent, until the host says it kept it
        self.said = set()       # skipped paths already reported
        self.cur = None         # (fd, rel) of the file being restored
        self.restored = {"files": 0, "dirs": 0, "bytes": 0, "errors": []}

    # -- restore (the host's puts)
    def _error(self, rel, why):
        errs = self.restored["errors"]
        if len(errs) < 20:
            errs.append({"path": rel, "why": why})

    def _close_cur(self):
        if self.cur:
            os.close(self.cur[0])
            self.cur = None

    def put(self, hdr, data):
        """One restore frame; the reply (a dict) at its end, else None."""
        kind = hdr.get("kind")
        if kind == "data":
            self._put_data(int(hdr.get("offset") or 0), data)
            return None
        self._close_cur()
        if kind == "end":
            self.base, skipped = scan(self.root, self.quiet_top)
            self.said = set(skipped)
            r = dict(self.restored)
            self.restored = {"files": 0, "dirs": 0, "bytes": 0, "errors": []}
            return r
        rel = hdr.get("path")
        if not isinstance(rel, str) or not rel or _why_not_name(rel):
            self._error(str(rel)[:200], "not a path this workspace can hold")
            return None
        parts = rel.split("/")
        if any(p in ("", ".", "..") for p in parts):
            self._error(rel, "not a path this workspace can hold")
            return None
        try:
            parent = self.ws.open(parts[:-1], os.O_PATH | os.O_DIRECTORY) if len(parts) > 1 else os.dup(self.ws.fd)
        except OSError as e:
            self._error(rel, os.strerror(e.errno))
            return None
        try:
            if kind == "dir":
                try:
                    os.mkdir(parts[-1], 0o755, dir_fd=parent)
                except FileExistsError:
                    pass
                self.restored["dirs"] += 1
            elif kind == "file":
                fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK |
                             os.O_CLOEXEC, 0o755 if hdr.get("exec") else 0o644, dir_fd=parent)
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    os.close(fd)
                    raise OSError(errno.ENXIO, "not a regular file")
                self.cur = (fd, rel)
                os.ftruncate(fd, int(hdr.get("size") or 0))
                self.restored["files"] += 1
        except OSError as e:
            self._close_cur()
            self._error(rel, "not restored: %s" % os.strerror(e.errno))
            if self.cur is None and kind == "file":
                self._unlink(parent, parts[-1])
        finally:
            os.close(parent)
        return None

    def _unlink(self, parent, name):
        try:
            os.unlink(name, dir_fd=parent)
        except OSError:
            pass

    def _put_data(self, offset, data):
        if not self.cur:
            return
        fd, rel = self.cur
        try:
            view = memoryview(data)
            while view:
                n = os.pwrite(fd, view, offset)
                view, offset = view[n:], offset + n
            self.restored["bytes"] += len(data)
        except OSError as e:
            self._close_cur()
            why = ("the workspace is full: not restored" if e.errno == errno.ENOSPC
                   else "not restored: %s" % os.strerror(e.errno))
            self._error(rel, why)
            parts = rel.split("/")
            try:
                parent = self.ws.open(parts[:-1], os.O_PATH | os.O_DIRECTORY) if len(parts) > 1 else os.dup(self.ws.fd)
                self._unlink(parent, parts[-1])
                os.close(parent)
            except OSError:
                pass

    # -- sync (to the host)
    def dirty(self):
        """Whether /work differs from what the host has (or is unknown)."""
        if self.base is None:
            return True
        now, _ = scan(self.root, self.quiet_top)
        return now != self.base

    def sync(self, send, rid, full):
        """Send what changed (everything when full, or when this side does
        not know what the host has) as data frames, then the reply."""
        now, skipped = scan(self.root, self.quiet_top)
        old = None if full or self.base is None else self.base
        out = {"type": "data", "id": rid}

        def op(**kw):
            send(dict(out, **kw))
        if old is not None:
            gone = [r for r in old if r not in now]
            gone_set = set(gone)
            for r in sorted(gone):
                if "/" in r and r.rsplit("/", 1)[0] in gone_set:
                    continue  # (its directory goes as a whole)
                op(op="del", path=r)
        for r, why in sorted(skipped.items()):
            if r not in self.said:
                op(op="skip", path=r, why=why)
        self.said = set(skipped)
        sent = {}
        files = nbytes = 0
        for r, key in now.items():
            if old is not None and old.get(r) == key:
                sent[r] = key
                continue
            if key[0] == "d":
                op(op="dir", path=r, mode=0o755)
                sent[r] = key
                continue
            n = self._send_file(send, out, r, key)
            if n is not None:
                sent[r] = key
                files += 1
                nbytes += n
        self.pending[rid] = sent
        send({"type": "reply", "id": rid, "ok": True, "files": files, "bytes": nbytes})

    def synced(self, rid, ok):
        """The host kept sync rid (what it sent is the base of the next),
        or not (the next sends the same changes again). The host answers
        in the order it asked: a later sync, asked before this answer came,
        was made against an older base and sent at least as much."""
        sent = self.pending.pop(rid, None)
        if ok and sent is not None:
            self.base = sent

    def _send_file(self, send, out, rel, key):
        """A file's op and its data extents; its byte count, or None when it
        is gone or no longer a regular file (then it is not sent)."""
        try:
            fd = self.ws.open(rel.split("/"), os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > FILE_MAX:
                return None
            size = st.st_size
            send(dict(out, op="file", path=rel, mode=0o755 if key[5] else 0o644, size=size))
            sent, pos = 0, 0
            while pos < size:
                try:
                    data = os.lseek(fd, pos, os.SEEK_DATA)
                except OSError as e:
                    if e.errno == errno.ENXIO:
                        break  # a hole to the end
                    data = pos
                try:
                    hole = min(os.lseek(fd, data, os.SEEK_HOLE), size)
                except OSError:
                    hole = size
                at = data
                while at < hole:
                    b = os.pread(fd, min(CHUNK, hole - at), at)
                    if not b:
                        hole = at  # it shrank meanwhile: the rest is a hole
                        break
                    send(dict(out, op="data", offset=at), b)
                    at += len(b)
                    sent += len(b)
                pos = max(hole, data + 1)
            return sent
        finally:
            os.close(fd)


def on_frame(ctl, t, rid, hdr):
    """The controller's put and sync requests (session.py)."""
    if ctl.mirror is None:
        # (a project folder the user bound is another filesystem at
        # /work/project: not part of the workspace, left out silently)
        ctl.mirror = Mirror(ctl.ws, ctl.workspace, quiet_top=("project",))
    if t == "put":
        data = ctl.ch.exact(int(hdr.get("code_bytes") or 0))
        r = ctl.mirror.put(hdr, data)
        if r is not None:
            ctl.send(dict(r, type="reply", id=rid, ok=True))
    elif t == "synced":
        ctl.mirror.synced(rid, bool(hdr.get("ok")))
    else:
        ctl.mirror.sync(ctl.send, rid, bool(hdr.get("full")))
