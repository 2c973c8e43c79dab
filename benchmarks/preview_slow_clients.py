"""How long a request to the preview's server takes while slow clients trickle theirs.

    python benchmarks/preview_slow_clients.py [--clients 0 12 50] [--every 1.0] [--requests 5]
                                              [--timeout 5] [--server PATH]

For each number of slow clients: a PreviewServer on 127.0.0.1 (its 8
workers), that many connections each sending one more byte of a request
head that never ends every --every seconds (one the server closes connects
again, so that many are always at it), 1.5 s for them all to begin, then
--requests GETs from another client, one after the other. Prints the
median and the maximum seconds until each was answered whole; a request
unanswered after --timeout seconds counts as that many, marked ">".

--server loads the server module from a file, to measure another version
of it: `git show REV:articlekit/render/preview_server.py > /tmp/old.py`,
then `--server /tmp/old.py`. Target: under 1 s with 12 and with 50 slow
clients (a deadline per socket read let 12 hold all 8 workers).
"""

import argparse
import importlib.util
import itertools
import math
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"


def load_server(path):
    spec = importlib.util.spec_from_file_location("preview_server_measured", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def handler_of(module):
    class Page(module.LocalHandler):
        def do_GET(self):
            body = b"<!DOCTYPE html><p>the page</p>\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Page


def closed(conn):
    """Whether the server closed the connection (without waiting)."""
    try:
        return conn.recv(1, socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


class Trickling:
    """`clients` connections, each sent one more byte of a head that never
    ends every `every` seconds; one the server closes is opened again."""

    def __init__(self, address, clients, every):
        self.address, self.every, self.done = address, every, threading.Event()
        self.conns = [self.connect() for _ in range(clients)]
        self.thread = threading.Thread(target=self.trickle, daemon=True)

    def connect(self):
        conn = socket.create_connection(self.address, timeout=5)
        conn.setblocking(False)  # with a timeout, even a MSG_DONTWAIT recv waits for it
        return conn, itertools.chain(b"GET / HTTP/1.1\r\nX-Slow: ", itertools.repeat(ord("a")))

    def trickle(self):
        while not self.done.is_set():
            for i, (conn, head) in enumerate(self.conns):
                if closed(conn):
                    conn.close()
                    self.conns[i] = conn, head = self.connect()
                try:
                    conn.send(bytes([next(head)]))
                except OSError:  # closed meanwhile: opened again at the next tick
                    pass
            self.done.wait(self.every)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()
        for conn, _ in self.conns:
            conn.close()


def timed_get(address, timeout):
    """Seconds until the whole answer came; None if it did not in `timeout`."""
    request = f"GET / HTTP/1.1\r\nHost: {HOST}:{address[1]}\r\n\r\n".encode()
    started = time.monotonic()
    answer = bytearray()
    try:
        with socket.create_connection(address, timeout=timeout) as conn:
            conn.sendall(request)
            while chunk := conn.recv(1 << 16):
                answer += chunk
    except OSError:  # a timeout, or a reset
        return None
    return time.monotonic() - started if answer.startswith(b"HTTP/1.0 200 ") else None


def measure(module, clients, args):
    server = module.PreviewServer((HOST, 0), handler_of(module))
    server.start()
    try:
        with Trickling(server.server_address, clients, args.every):
            time.sleep(1.5)  # every slow client has sent its first bytes
            return [timed_get(server.server_address, args.timeout) for _ in range(args.requests)]
    finally:
        server.stop()


def said(seconds, timeout):
    return f">{timeout:g}" if seconds == math.inf else f"{seconds:.4f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[0, 12, 50])
    parser.add_argument("--every", type=float, default=1.0, help="seconds between a slow client's bytes")
    parser.add_argument("--requests", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--server", default=str(ROOT / "articlekit/render/preview_server.py"))
    args = parser.parse_args()
    module = load_server(args.server)
    print(f"server: {args.server}, {module.WORKERS} workers; slow clients send a byte every {args.every:g} s")
    for clients in args.clients:
        times = [math.inf if t is None else t for t in measure(module, clients, args)]
        answered = sum(t < math.inf for t in times)
        print(
            f"{clients:3d} slow clients: a GET answered in {said(statistics.median(times), args.timeout)} s (median), "
            f"{said(max(times), args.timeout)} s (max); {answered}/{len(times)} answered within {args.timeout:g} s",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
