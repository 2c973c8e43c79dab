"""The preview's HTTP server: http.server's request handling, with the
limits a server on an author's machine needs, since any page open in the
author's browser can send it requests.

- It answers only requests addressed to it: the `Host:` of each request must
  be the address it listens on (and localhost:PORT, 127.0.0.1:PORT,
  [::1]:PORT when that is a loopback or wildcard address). Anything else
  gets 403 with a one-line reason: a page of another site whose name was
  re-pointed at 127.0.0.1 (DNS rebinding) sends its own name, and so cannot
  read the preview.
- A connection that has sent nothing holds no thread. The server's thread
  accepts connections and watches them (selectors) until their request
  begins to arrive, then hands them to a pool of WORKERS threads. One that
  stays silent for IDLE_TIMEOUT seconds is closed; past MAX_OPEN open
  connections the oldest silent one is closed to make room (a browser sends
  its request at once, so the newest is the likeliest to be real). The
  handler's socket has the same timeout: a client that stops halfway
  through its request, or stops reading the answer, is dropped.
- stop() returns within a fraction of a second whatever connections are
  open: silent ones are closed, and those a worker is serving are shut
  down, which wakes the worker from its read or write.
"""

import ipaddress
import selectors
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer

WORKERS = 8  # handler threads; the open page polls one request at a time
IDLE_TIMEOUT = 5.0  # seconds a connection may stay silent, before or during its request
MAX_OPEN = 128  # connections open at once, silent or served
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def bracketed(host):
    """An IPv6 address as a URL or a Host: header writes it."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def own_hosts(asked, bound):
    """The Host: values that name this server: the host it was asked to
    listen on (a name or an address), the address it bound, and the loopback
    names when that address is a loopback or wildcard one, each with the
    port (also without it on port 80, where browsers leave it out)."""
    address, port = bound[0], bound[1]
    names = {asked, address} - {""}
    ip = ipaddress.ip_address(address)
    if ip.is_loopback or ip.is_unspecified:
        names.update(LOOPBACK_NAMES)
    names = {bracketed(n).lower() for n in names}
    return {f"{n}:{port}" for n in names} | (names if port == 80 else set())


class LocalHandler(BaseHTTPRequestHandler):
    """A request handler that refuses requests not addressed to its server
    and gives up on a silent client (its socket's timeout). Subclasses
    write do_GET."""

    timeout = IDLE_TIMEOUT  # StreamRequestHandler sets it on the socket; a timeout ends the connection

    def parse_request(self):
        if not super().parse_request():
            return False
        hosts = self.headers.get_all("Host") or []
        if len(hosts) == 1 and hosts[0].strip().lower() in self.server.hosts:
            return True
        said = "no Host header" if not hosts else f"Host {', '.join(hosts)!r}"
        reason = (
            f"refused: {said} does not name this preview, which answers {self.server.hosts_said()} only "
            "(a page of another site cannot read it; start the preview with --host NAME to serve "
            "it under another name)\n"
        )
        self.send_response(403)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(reason.encode())))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(reason.encode())
        self.close_connection = True
        return False

    def log_message(self, *args):  # quiet: the terminal shows renders, not requests
        pass


class PreviewServer(HTTPServer):
    """Serve `handler` (a LocalHandler) on `address` from a thread of its
    own: start(), then stop()."""

    def __init__(self, address, handler, workers=WORKERS, idle_timeout=IDLE_TIMEOUT, max_open=MAX_OPEN):
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, handler)
        self.hosts = own_hosts(address[0].lower(), self.server_address)
        self.idle_timeout, self.max_open = idle_timeout, max_open
        self.silent = {}  # socket -> (client address, when it is closed unless it speaks): oldest first
        self.served = set()  # sockets handed to the pool, waiting for a worker or being served
        self.served_lock = threading.Lock()
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="preview-http")
        self.selector = selectors.DefaultSelector()
        self.wake_up, self.wake_call = socket.socketpair()  # stop() wakes the loop from its select
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.serve, name="preview-http-accept", daemon=True)

    @property
    def url(self):
        host, port = self.server_address[:2]
        return f"http://{bracketed(host)}:{port}/"

    def hosts_said(self):
        return ", ".join(sorted(self.hosts))

    def start(self):
        self.thread.start()

    def serve(self):
        """The loop of the server's thread: accept, watch the silent, hand over the speaking."""
        self.socket.setblocking(False)  # accept() never waits (the sockets it returns do block)
        self.selector.register(self.socket, selectors.EVENT_READ)
        self.selector.register(self.wake_up, selectors.EVENT_READ)
        while not self.stopping.is_set():
            for key, _ in self.selector.select(self.next_deadline()):
                if key.fileobj is self.socket:
                    self.accept()
                elif key.fileobj in self.silent:
                    self.hand_over(key.fileobj)
            self.close_silent(time.monotonic())

    def next_deadline(self):
        """Seconds until the oldest silent connection times out (None: none is open)."""
        if not self.silent:
            return None
        _, deadline = next(iter(self.silent.values()))
        return max(0.0, deadline - time.monotonic())

    def accept(self):
        try:
            conn, client = self.socket.accept()
        except BlockingIOError:
            return
        except OSError:  # out of file descriptors: the oldest silent one makes room, or we wait a little
            if not self.close_oldest_silent():
                time.sleep(0.05)
            return
        with self.served_lock:
            full = len(self.silent) + len(self.served) >= self.max_open
        if full and not self.close_oldest_silent():
            conn.close()  # every slot holds a request being answered: refuse
            return
        self.silent[conn] = (client, time.monotonic() + self.idle_timeout)
        self.selector.register(conn, selectors.EVENT_READ)

    def forget_silent(self, conn):
        self.selector.unregister(conn)
        return self.silent.pop(conn)[0]

    def close_oldest_silent(self):
        if not self.silent:
            return False
        oldest = next(iter(self.silent))
        self.forget_silent(oldest)
        oldest.close()
        return True

    def close_silent(self, now):
        expired = [conn for conn, (_, deadline) in self.silent.items() if deadline <= now]
        for conn in expired:
            self.forget_silent(conn)
            conn.close()

    def hand_over(self, conn):
        """A silent connection began its request: a worker serves it."""
        client = self.forget_silent(conn)
        with self.served_lock:
            self.served.add(conn)
        self.pool.submit(self.serve_connection, conn, client)

    def serve_connection(self, conn, client):
        try:
            self.finish_request(conn, client)
        except Exception:
            self.handle_error(conn, client)
        finally:
            with self.served_lock:
                self.served.discard(conn)
            self.shutdown_request(conn)

    def handle_error(self, request, client_address):
        """A client that hung up or reset is no error of ours; anything else is printed."""
        if not self.stopping.is_set() and not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def stop(self):
        """Stop serving: no new connection, the silent ones closed, those being
        served woken from their socket and closed; returns once no worker runs."""
        self.stopping.set()
        self.wake_call.send(b"x")
        if self.thread.ident is not None:
            self.thread.join()
        for conn in list(self.silent):
            self.forget_silent(conn)
            conn.close()
        with self.served_lock:
            served = list(self.served)
        for conn in served:
            try:
                conn.shutdown(socket.SHUT_RDWR)  # a worker blocked reading or writing it returns at once
            except OSError:
                pass
        self.pool.shutdown(wait=True, cancel_futures=True)
        with self.served_lock:
            for conn in self.served:  # handed over, never started: cancelled
                conn.close()
            self.served.clear()
        self.selector.close()
        self.wake_up.close()
        self.wake_call.close()
        self.server_close()
