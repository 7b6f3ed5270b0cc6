"""channel: framing both ways, malformed frames, and moving bytes between
fds with splice(2) (protocol v2: a job's code and output never pass
through the worker's memory)."""
import json
import os
import socket
import struct
import threading

import pytest

from driver import channel
from driver.channel import Channel, Malformed


def pipe_channel():
    r, w = os.pipe()
    return Channel(r, w), (r, w)


def close(*fds):
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def test_encode_layout():
    f = channel.encode({"type": "out", "id": 3, "stream": "stdout"}, b"hi\n")
    body = b'{"type":"out","id":3,"stream":"stdout"}\nhi\n'
    assert f == struct.pack(">I", len(body)) + body
    # no payload: no separator (the host refuses "\n" on frames without bytes)
    assert channel.encode({"type": "done"}) == struct.pack(">I", 15) + b'{"type":"done"}'


@pytest.mark.parametrize("payload", [b"", b"x", b"line\nwith\nnewlines\n", bytes(range(256)) * 300],
                         ids=["empty", "one", "newlines", "binary-75k"])
def test_round_trip(payload):
    ch, fds = pipe_channel()
    try:
        t = threading.Thread(target=ch.send, args=({"type": "run", "id": 1, "lang": "python"}, payload))
        t.start()
        hdr, got = ch.recv()
        t.join()
        assert hdr == {"type": "run", "id": 1, "lang": "python"} and got == payload
    finally:
        close(*fds)


def feed(raw):
    """A channel whose sender wrote `raw` and closed."""
    r, w = os.pipe()
    os.write(w, raw)
    os.close(w)
    return Channel(r, -1, max_in=1 << 16), r


@pytest.mark.parametrize("raw,err", [
    (struct.pack(">I", 8) + b"not json", Malformed),
    (struct.pack(">I", 7) + b"[1,2,3]", Malformed),            # JSON, not an object
    (struct.pack(">I", 4) + b"\xff\xfe{}", Malformed),         # not UTF-8
    (struct.pack(">I", 2) + b'"x"', Malformed),                # a string
    (struct.pack(">I", (1 << 16) + 1) + b"{}", Malformed),     # over the limit, refused before reading
    (struct.pack(">I", 100) + b'{"type":"run"}', EOFError),   # truncated body
    (b"\x00\x00", EOFError),                                   # truncated length
    (b"", EOFError),
])
def test_malformed_frames(raw, err):
    ch, r = feed(raw)
    try:
        with pytest.raises(err):
            ch.recv()
    finally:
        os.close(r)


def test_malformed_is_a_value_error():
    # the worker's callers catch ValueError, as before the split
    assert issubclass(Malformed, ValueError)


def test_recv_never_reads_past_the_frame():
    """Protocol v2: raw code bytes follow a run frame; recv must leave them
    in the channel for splice."""
    ch, r = feed(channel.encode({"type": "run", "code_bytes": 5}) + b"CODE!" + channel.encode({"type": "cancel"}))
    try:
        hdr, payload = ch.recv()
        assert hdr["code_bytes"] == 5 and payload == b""
        assert os.read(r, 5) == b"CODE!"
        assert ch.recv()[0] == {"type": "cancel"}
    finally:
        os.close(r)


def test_splice_exact_between_pipes():
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    try:
        data = os.urandom(200000)
        t = threading.Thread(target=lambda: (os.write(a_w, data[:100000]), os.write(a_w, data[100000:])))
        t.start()
        got = bytearray()
        reader = threading.Thread(target=lambda: got.extend(Channel(b_r, -1).exact(len(data))))
        reader.start()
        channel.splice_exact(a_r, b_w, len(data))
        t.join()
        reader.join()
        assert bytes(got) == data
    finally:
        close(a_r, a_w, b_r, b_w)


def test_splice_exact_from_a_socket():
    """The channel may be a socket (container runtimes): socket -> pipe."""
    s1, s2 = socket.socketpair()
    r, w = os.pipe()
    try:
        s1.sendall(b"hello from the host")
        channel.splice_exact(s2.fileno(), w, 19)
        assert os.read(r, 100) == b"hello from the host"
    finally:
        s1.close()
        s2.close()
        close(r, w)


def test_splice_exact_eof_and_broken_pipe():
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    try:
        os.write(a_w, b"abc")
        os.close(a_w)
        with pytest.raises(EOFError):
            channel.splice_exact(a_r, b_w, 10)
        c_r, c_w = os.pipe()
        os.write(c_w, b"xyz")
        os.close(b_r)
        with pytest.raises(BrokenPipeError):
            channel.splice_exact(c_r, b_w, 3)
        close(c_r, c_w)
    finally:
        close(a_r, a_w, b_r, b_w)


def test_discard_consumes_without_reading():
    r, w = os.pipe()
    try:
        writer = threading.Thread(target=os.write, args=(w, b"x" * 70000 + channel.encode({"type": "cancel"})))
        writer.start()
        channel.discard(r, 70000)
        writer.join(10)
        assert Channel(r, -1).recv()[0] == {"type": "cancel"}
    finally:
        close(r, w)


def test_send_spliced_is_an_ordinary_out_frame():
    """The worker writes the header and splices the bytes: the host's
    parser (unchanged) must see exactly what send() would have produced."""
    job_r, job_w = os.pipe()
    host_r, host_w = os.pipe()
    try:
        os.write(job_w, b"output\x00\xff bytes\n" * 10)
        n = channel.pending(job_r)
        assert n == 150
        Channel(-1, host_w).send_spliced({"type": "out", "id": 7, "stream": "stderr"}, job_r, n)
        raw = os.read(host_r, 1 << 16)
        assert raw == channel.encode({"type": "out", "id": 7, "stream": "stderr"}, b"output\x00\xff bytes\n" * 10)
        assert channel.pending(job_r) == 0
        body = raw[4:]
        hdr, payload = channel.decode_body(body)
        assert json.loads(body.split(b"\n")[0]) == hdr
    finally:
        close(job_r, job_w, host_r, host_w)


def test_header_never_holds_a_lone_surrogate():
    """a File named with bytes that are not UTF-8 came out of
    os.fsdecode as lone surrogates, json.dumps wrote "\\udcff", and the host
    (jansson) refused the frame, ending the session. Every string of a
    header is text the host can read: a name's bytes as \\xNN, any other
    lone surrogate as U+FFFD; characters past U+FFFF pass unchanged."""
    name = b"\xff\xfe-latin1".decode("utf-8", "surrogateescape")
    hdr = {"type": "reply", "entries": [{"name": name}], "path": "/work/" + name, "odd": "\ud800", "e": "\U0001F600"}
    body = channel.encode(hdr)[4:]
    body.decode("ascii")
    got = json.loads(body)
    assert got["entries"][0]["name"] == "\\xff\\xfe-latin1"
    assert got["path"] == "/work/\\xff\\xfe-latin1"
    assert got["odd"] == "\ufffd"
    assert got["e"] == "\U0001F600"
    assert b"\\udcff" not in body and b"\\ud800" not in body
    # a header with nothing to clean is written as before
    assert channel.encode({"a": "b\u00e9"}) == struct.pack(">I", 15) + b'{"a":"b\\u00e9"}'
