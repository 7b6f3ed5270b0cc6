"""A tiny wheel made by hand (zipfile: nothing is built or downloaded) and
a PEP 503 simple index serving it on loopback (python's http.server), for
`sagebox packages add`. Also an sdist-only project: wheels only
are ever installed, so adding it must fail."""
import base64
import functools
import hashlib
import http.server
import io
import os
import tarfile
import threading
import zipfile

NAME = "sbtinypkg"
VERSION = "0.1"
SRC_ONLY = "sbsrconly"
MODULE = 'VALUE = 42\n\ndef hello():\n    return "hello from sbtinypkg"\n'


def _record_hash(data):
    d = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={d}"


def make_wheel(out_dir):
    """sbtinypkg-0.1-py3-none-any.whl, a pure-Python wheel with a script."""
    di = f"{NAME}-{VERSION}.dist-info"
    files = {
        f"{NAME}/__init__.py": MODULE.encode(),
        f"{di}/METADATA": f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
                          "Summary: sagebox test package\n".encode(),
        f"{di}/WHEEL": b"Wheel-Version: 1.0\nGenerator: sagebox-tests\nRoot-Is-Purelib: true\n"
                       b"Tag: py3-none-any\n",
        f"{di}/top_level.txt": f"{NAME}\n".encode(),
    }
    record = "".join(f"{p},{_record_hash(d)},{len(d)}\n" for p, d in files.items()) + f"{di}/RECORD,,\n"
    files[f"{di}/RECORD"] = record.encode()
    path = os.path.join(out_dir, f"{NAME}-{VERSION}-py3-none-any.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files.items():
            z.writestr(p, d)
    return path


def make_sdist(out_dir):
    path = os.path.join(out_dir, f"{SRC_ONLY}-0.1.tar.gz")
    with tarfile.open(path, "w:gz") as t:
        data = b"raise SystemExit('this setup.py must never run')\n"
        info = tarfile.TarInfo(f"{SRC_ONLY}-0.1/setup.py")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return path


def make_index(root):
    """root/files/*, root/simple/NAME/index.html (PEP 503)."""
    files = os.path.join(root, "files")
    os.makedirs(files, exist_ok=True)
    for project, path in ((NAME, make_wheel(files)), (SRC_ONLY, make_sdist(files))):
        d = os.path.join(root, "simple", project)
        os.makedirs(d, exist_ok=True)
        name = os.path.basename(path)
        digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
        with open(os.path.join(d, "index.html"), "w") as f:
            f.write(f'<!DOCTYPE html><html><body><a href="../../files/{name}#sha256={digest}">{name}</a>'
                    "</body></html>\n")
    with open(os.path.join(root, "simple", "index.html"), "w") as f:
        f.write("".join(f'<a href="{p}/">{p}</a>\n' for p in (NAME, SRC_ONLY)))


class Index:
    """The index served on 127.0.0.1:PORT until close()."""

    def __init__(self, root):
        make_index(root)
        handler = functools.partial(_Quiet, directory=root)
        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.srv.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/simple"
        self.requests = []
        _Quiet.seen = self.requests
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def pip_args(self, host):
        """pip install's arguments for NAME from this index, reached as
        HOST (plain http: pip wants the host marked trusted)."""
        return f"--index-url http://{host}:{self.port}/simple --trusted-host {host}:{self.port} {NAME}"

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    seen = []

    def log_message(self, fmt, *args):
        _Quiet.seen.append(self.path)


def serve(tmp_path_factory):
    """The body of an `index` fixture: an Index in a new temporary
    directory, closed when the fixture ends (yield from serve(...))."""
    ix = Index(str(tmp_path_factory.mktemp("index")))
    yield ix
    ix.close()
