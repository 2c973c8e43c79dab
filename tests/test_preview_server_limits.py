"""The preview server's limits on slow clients, and the headers of every
answer (articlekit.render.preview_server): a client that trickles its
request holds no worker and is closed at the request's deadline, a client
that stops reading is dropped at the answer's, an oversize head is refused,
and every response says the page may load nothing but what it embeds.

Real sockets on 127.0.0.1, the server in this process, ephemeral ports."""

import itertools
import socket
import threading
import time
from contextlib import contextmanager

import pytest

from articlekit.render.preview import RELOAD_SCRIPT, STATE_PATH, make_handler
from articlekit.render.preview_server import (
    CONTENT_SECURITY_POLICY,
    HEAD_LIMIT,
    LocalHandler,
    PreviewServer,
)

HOST = "127.0.0.1"
CHUNK = bytes(1 << 20)
BIG = 64  # MiB: more than the kernel buffers between a client that stops reading and the server


class Hello(LocalHandler):
    """GET: a line (/big: BIG MiB); POST: the body back, as read from the handler's rfile."""

    def do_GET(self):
        big = self.path == "/big"
        self.answer(BIG * len(CHUNK) if big else 6, [CHUNK] * BIG if big else [b"hello\n"])

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.answer(len(body), [body])

    def answer(self, length, pieces):
        self.send_response(200)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        for piece in pieces:
            self.wfile.write(piece)


class StubPreview:
    """What the preview's handler asks of a Preview: its page and its state."""

    def served_page(self):
        return b"<!DOCTYPE html><html><body><p>the page</p></body></html>"

    def state(self):
        return {"version": 1}


@contextmanager
def serving(handler=Hello, **limits):
    server = PreviewServer((HOST, 0), handler, **limits)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def request(server, path="/", method="GET", host=None):
    host = host or f"{HOST}:{server.server_address[1]}"
    return f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()


def read_all(conn):
    """Everything the server sends until it closes (b"" after a reset or a
    timeout of the client's: whatever came is kept)."""
    received = bytearray()
    try:
        while chunk := conn.recv(1 << 16):
            received += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return bytes(received)


def timed_get(server, raw, timeout=5):
    """-> (seconds until the whole answer came, the answer; b"" if none came in `timeout`)."""
    started = time.monotonic()
    with socket.create_connection(server.server_address, timeout=timeout) as conn:
        conn.sendall(raw)
        answer = read_all(conn)
    return time.monotonic() - started, answer


def headers(answer):
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")[1:]
    return {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in head)}


@contextmanager
def trickling(server, clients, every):
    """`clients` connections, each sending one more byte of a request head
    that never ends every `every` seconds (a hostile tester's attack)."""
    conns = [socket.create_connection(server.server_address, timeout=10) for _ in range(clients)]
    done = threading.Event()

    def trickle():
        head = itertools.chain(b"GET / HTTP/1.1\r\nX-Slow: ", itertools.repeat(ord("a")))
        while not done.is_set():
            byte = bytes([next(head)])
            for conn in conns:
                try:
                    conn.send(byte)
                except OSError:  # the server closed it
                    pass
            done.wait(every)

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        yield conns
    finally:
        done.set()
        thread.join()
        for conn in conns:
            conn.close()


@pytest.mark.parametrize("clients", [12, 50])
def test_clients_trickling_their_requests_hold_no_worker(clients):
    """12 (or 50) clients sending a byte every quarter second, more than the
    pool's 8 workers: a request from another client is answered within a
    second. With a timeout per read, each held a worker as long as it
    trickled (a read never waited longer than a quarter second)."""
    with serving() as server, trickling(server, clients, every=0.25):
        time.sleep(0.6)  # each has sent its first bytes, and goes on
        took, answer = timed_get(server, request(server))
    assert answer.startswith(b"HTTP/1.0 200 "), answer[:80]
    assert took < 1.0, took


def test_a_request_head_that_never_ends_is_closed_at_the_deadline():
    """However often it sends a byte, a client whose head is not complete
    REQUEST_DEADLINE seconds after its first byte is closed."""
    with serving(request_deadline=0.5) as server, trickling(server, 1, every=0.05) as (conn,):
        began = time.monotonic()
        assert read_all(conn) == b""  # closed, with nothing said (a timeout here: never closed)
        took = time.monotonic() - began
    assert 0.3 < took < 2.0, took  # the deadline (0.5 s), and a margin


def test_a_head_sent_in_pieces_is_served_and_its_body_read_after_it():
    """The handler reads the head the server's thread gathered (its blank
    line split across two reads), then the body from the socket."""
    with serving() as server, socket.create_connection(server.server_address, timeout=5) as conn:
        pieces = [b"POST / HT", f"TP/1.0\r\nHost: {HOST}:{server.server_address[1]}\r\n".encode()]
        pieces += [b"Content-Length: 10\r\n", b"\r\n01234", b"56789"]
        for piece in pieces:
            conn.sendall(piece)
            time.sleep(0.05)
        answer = read_all(conn)
    assert answer.startswith(b"HTTP/1.0 200 ") and answer.endswith(b"\r\n\r\n0123456789"), answer


def test_an_oversize_head_is_refused_with_431():
    head = b"GET / HTTP/1.1\r\nX-Big: "
    with serving() as server, socket.create_connection(server.server_address, timeout=10) as conn:
        conn.sendall(head + b"a" * (HEAD_LIMIT + 1 - len(head)))  # one byte over, and no end in sight
        answer = read_all(conn)
    assert answer.startswith(b"HTTP/1.0 431 "), answer[:80]
    assert f"over {HEAD_LIMIT} bytes".encode() in answer


def test_a_client_that_stops_reading_is_dropped_at_the_deadline():
    """A client that asks for a long answer and reads none of it holds the
    only worker until RESPONSE_DEADLINE, not longer; then it is dropped, and
    the next request is served."""
    with serving(workers=1, response_deadline=0.5) as server:
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: the server blocks soon
        stalled.settimeout(10)
        stalled.connect(server.server_address)
        stalled.sendall(request(server, "/big"))
        time.sleep(0.2)  # the worker is writing to it
        took, answer = timed_get(server, request(server))
        cut_short = len(read_all(stalled))
        stalled.close()
    assert answer.startswith(b"HTTP/1.0 200 "), answer[:80]
    assert took < 2.0, took  # the deadline (0.5 s) and a margin
    assert cut_short < BIG * len(CHUNK)


def test_every_response_carries_the_security_headers():
    """The page, the poll, a 404, the 403 of a foreign Host, http.server's
    own 400 and 501, and the server thread's 431."""
    head = b"GET / HTTP/1.1\r\nX-Big: "
    with serving(make_handler(StubPreview())) as server:
        answers = {
            "page": request(server),
            "poll": request(server, STATE_PATH),
            "404": request(server, "/figure.png"),
            "403": request(server, host="evil.example"),
            "400": b"GET / two-paths HTTP/1.1\r\n\r\n",
            "501": request(server, method="PUT"),
            "431": head + b"a" * (HEAD_LIMIT + 1 - len(head)),
        }
        for what, raw in answers.items():
            _, answer = timed_get(server, raw)
            status = answer.split(b" ", 2)[1].decode() if answer else "nothing"
            assert status == {"page": "200", "poll": "200"}.get(what, what), (what, answer[:80])
            said = headers(answer)
            assert said.get("content-security-policy") == CONTENT_SECURITY_POLICY, (what, said)
            assert said.get("x-content-type-options") == "nosniff", (what, said)
            assert said.get("referrer-policy") == "no-referrer", (what, said)


def test_the_policy_lets_the_page_poll_and_load_nothing_else():
    """The reload script is inline and polls this server's own state; the
    rest of the page embeds what it shows (data: URLs)."""
    policy = dict(d.strip().split(" ", 1) for d in CONTENT_SECURITY_POLICY.split(";"))
    assert policy["default-src"] == "'none'"
    assert policy["connect-src"] == "'self'" and STATE_PATH.startswith("/")
    assert RELOAD_SCRIPT.startswith("<script>") and "'unsafe-inline'" in policy["script-src"]
    sources = {source for directive in policy.values() for source in directive.split()}
    assert sources <= {"'none'", "'self'", "'unsafe-inline'", "data:"}, sources  # no host, scheme or wildcard
    assert policy["frame-ancestors"] == policy["base-uri"] == policy["form-action"] == "'none'"
