"""The files a session's call wrote: the session's controller
takes a snapshot of the workspace before the call and compares after it, so
that the result can link each new or changed file (resource_link blocks,
sagebox://session/ID/PATH). Regular files only, symlinks not followed, by
(mtime, size, inode); a workspace of more than MAX_SCAN entries is not
compared at all (the call is not slowed down by a huge tree). Top-level
names in skip are not walked (.local, where pip installs with network: a
package's files are not the call's output, and would fill MAX_SCAN)."""
import os

MAX_SCAN = 5000   # entries walked at most, per snapshot
MAX_LINKS = 20    # paths one result lists; more are counted


def snapshot(root, skip=()):
    """{path relative to root: (mtime_ns, size, inode)} of the regular
    files under root but the top-level names in skip, or None when it has
    more than MAX_SCAN entries."""
    out, seen, stack = {}, 0, [""]
    while stack:
        rel = stack.pop()
        try:
            it = os.scandir(os.path.join(root, rel) if rel else root)
        except OSError:
            continue
        with it:
            for e in it:
                if not rel and e.name in skip:
                    continue
                seen += 1
                if seen > MAX_SCAN:
                    return None
                path = rel + "/" + e.name if rel else e.name
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(path)
                    elif e.is_file(follow_symlinks=False):
                        st = e.stat(follow_symlinks=False)
                        out[path] = (st.st_mtime_ns, st.st_size, st.st_ino)
                except OSError:
                    pass
    return out


def changed(before, root, skip=()):
    """(paths, more): the first MAX_LINKS files new or changed since
    before, sorted, and how many more there are."""
    if before is None:
        return [], 0
    after = snapshot(root, skip)
    if after is None:
        return [], 0
    paths = sorted(p for p, st in after.items() if before.get(p) != st)
    return paths[:MAX_LINKS], max(0, len(paths) - MAX_LINKS)
