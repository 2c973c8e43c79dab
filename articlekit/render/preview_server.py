"""The preview's HTTP server: http.server's request handling, with the
limits a server on an author's machine needs, since any page open in the
author's browser can send it requests.

- It answers only requests addressed to it: the `Host:` of each request must
  be the address it listens on (and localhost:PORT, 127.0.0.1:PORT,
  [::1]:PORT when that is a loopback or wildcard address). Anything else
  gets 403 with a one-line reason: a page of another site whose name was
  re-pointed at 127.0.0.1 (DNS rebinding) sends its own name, and so cannot
  read the preview.
- A client holds a thread only once its whole request head has arrived.
  The server's thread accepts connections, watches them (selectors) and
  reads each request's line and headers itself, as they come, into a
  buffer; a complete head (up to its blank line) goes to a pool of WORKERS
  threads, whose handler reads it from that buffer. A connection silent
  for IDLE_TIMEOUT seconds is closed, and so is one whose head is not
  complete REQUEST_DEADLINE seconds after its first byte, however it
  trickles (a deadline per read let 12 clients sending a byte every 3 s
  hold all 8 workers, and a real request wait 30 s); a head over
  HEAD_LIMIT bytes gets 431. Past MAX_OPEN open connections the oldest
  waiting one is closed to make room (a browser sends its request at once,
  so the newest is the likeliest to be real). A connection carries one
  request: a second would be read by a worker at the client's pace.
- The whole answer must be written within RESPONSE_DEADLINE seconds: a
  client that stops reading is dropped then, its worker freed.
- Every response, pages, polls and refusals alike, says that the page may
  load nothing but what it embeds (CONTENT_SECURITY_POLICY), is not to be
  sniffed as another type, and sends no Referer when a link is followed.
- stop() returns within a fraction of a second whatever connections are
  open: waiting ones are closed, and those a worker is serving are shut
  down, which wakes the worker from its read or write.
"""

import io
import ipaddress
import selectors
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer

WORKERS = 8  # handler threads; the open page polls one request at a time
IDLE_TIMEOUT = 5.0  # seconds a connection may stay silent before its request begins
REQUEST_DEADLINE = 5.0  # seconds from a request's first byte to the end of its head (line and headers)
RESPONSE_DEADLINE = 10.0  # seconds to write a whole answer (a page of a few MB takes milliseconds)
HEAD_LIMIT = 16 * 1024  # bytes of request line and headers; a browser sends under 2 KB
MAX_OPEN = 128  # connections open at once, waiting or served
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")

# The page may load nothing but what it embeds: the renderers put every
# style sheet, font, image and script in the page itself, inline or as a
# data: URL (articlekit.render.pagecheck refuses a page that names any
# other), so a policy this narrow costs the page nothing, and anything that
# slipped past the check fetches nothing and sends nothing anywhere.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",  # whatever is not named below: nothing (frames, objects, media, workers, manifests)
        "img-src data:",  # the figures, embedded as data: URLs
        "font-src data:",  # fonts a style sheet embeds (Quarto's icons)
        "style-src 'unsafe-inline' data:",  # the page's <style> and style= (Pandoc, Quarto, the banner)
        "script-src 'unsafe-inline' data:",  # the reload script, inline; Quarto's own, inline or data: URLs
        "connect-src 'self'",  # the reload script's poll of this server's state
        "base-uri 'none'",  # no <base> re-points the page's relative links
        "form-action 'none'",  # no form submits anywhere
        "frame-ancestors 'none'",  # no other site's page frames the preview
    )
)
SECURITY_HEADERS = (
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("X-Content-Type-Options", "nosniff"),  # a text/plain error or the JSON poll is never run as a script
    ("Referrer-Policy", "no-referrer"),  # a followed link does not tell the site the preview's address
)


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


def head_ends(head, start):
    """Whether the head holds its blank line at or after `start`: CRLF, or
    the bare LF that http.server also accepts."""
    return head.find(b"\n\r\n", start) >= 0 or head.find(b"\n\n", start) >= 0


def plain_answer(status, phrase, text):
    """A whole HTTP response, for the server's thread to send without a handler."""
    body = text.encode()
    lines = [f"HTTP/1.0 {status} {phrase}", "Content-Type: text/plain; charset=utf-8"]
    lines += [f"Content-Length: {len(body)}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in SECURITY_HEADERS]
    return "\r\n".join(lines).encode() + b"\r\n\r\n" + body


class AfterHead(io.RawIOBase):
    """What a handler reads: the head the server's thread took from the
    socket, then the socket itself (a body, should one come)."""

    def __init__(self, head, conn):
        self.head, self.conn = head, conn

    def readable(self):
        return True

    def readinto(self, buffer):
        if not self.head:
            return self.conn.recv_into(buffer)
        n = min(len(buffer), len(self.head))
        buffer[:n] = self.head[:n]
        self.head = self.head[n:]
        return n


class DeadlineWriter(io.BufferedIOBase):
    """A handler's writes, all within one deadline: a socket timeout alone
    restarts at each write, so a client reading a byte now and then would
    hold the worker write after write."""

    def __init__(self, conn, deadline):
        self.conn, self.deadline = conn, deadline

    def writable(self):
        return True

    def write(self, data):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the client did not read the answer in time")
        self.conn.settimeout(left)
        self.conn.sendall(data)  # the timeout bounds the whole sendall (Python 3.5+)
        with memoryview(data) as view:
            return view.nbytes


class LocalHandler(BaseHTTPRequestHandler):
    """A request handler that refuses requests not addressed to its server,
    reads the head its server's thread buffered, writes its answer within
    the server's deadline and adds SECURITY_HEADERS to every response.
    Subclasses write do_GET."""

    timeout = IDLE_TIMEOUT  # for a body's reads, should a handler read one

    def setup(self):
        self.connection = self.request
        self.connection.settimeout(self.timeout)
        self.rfile = io.BufferedReader(AfterHead(self.server.take_head(self.connection), self.connection))
        self.wfile = DeadlineWriter(self.connection, time.monotonic() + self.server.response_deadline)

    def handle(self):
        self.handle_one_request()  # one per connection: the next one arrives through the server's thread

    def end_headers(self):
        for name, value in SECURITY_HEADERS:  # pages, polls, 403s and http.server's own errors alike
            self.send_header(name, value)
        super().end_headers()

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


@dataclass
class Waiting:
    """A connection whose request head is not complete yet."""

    client: tuple
    deadline: float  # when it is closed unless its head is complete
    head: bytearray = field(default_factory=bytearray)


class PreviewServer(HTTPServer):
    """Serve `handler` (a LocalHandler) on `address` from a thread of its
    own: start(), then stop()."""

    # connections the kernel queues before the server's thread accepts them:
    # with http.server's 5, a burst of a dozen saw SYNs dropped and retried a second later
    request_queue_size = MAX_OPEN

    def __init__(
        self,
        address,
        handler,
        workers=WORKERS,
        idle_timeout=IDLE_TIMEOUT,
        max_open=MAX_OPEN,
        request_deadline=REQUEST_DEADLINE,
        response_deadline=RESPONSE_DEADLINE,
        head_limit=HEAD_LIMIT,
    ):
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, handler)
        self.hosts = own_hosts(address[0].lower(), self.server_address)
        self.idle_timeout, self.max_open, self.head_limit = idle_timeout, max_open, head_limit
        self.request_deadline, self.response_deadline = request_deadline, response_deadline
        self.waiting = {}  # socket -> Waiting: oldest first
        self.served = {}  # socket -> its head: handed to the pool, waiting for a worker or being served
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
        """The loop of the server's thread: accept, read the heads as they
        come, close the late, hand over the complete."""
        self.socket.setblocking(False)  # accept() never waits
        self.selector.register(self.socket, selectors.EVENT_READ)
        self.selector.register(self.wake_up, selectors.EVENT_READ)
        while not self.stopping.is_set():
            for key, _ in self.selector.select(self.next_deadline()):
                if key.fileobj is self.socket:
                    self.accept()
                elif key.fileobj in self.waiting:
                    self.read_head(key.fileobj)
            self.close_late(time.monotonic())

    def next_deadline(self):
        """Seconds until the first waiting connection is due (None: none is open)."""
        if not self.waiting:
            return None
        return max(0.0, min(w.deadline for w in self.waiting.values()) - time.monotonic())

    def accept(self):
        try:
            conn, client = self.socket.accept()
        except BlockingIOError:
            return
        except OSError:  # out of file descriptors: the oldest waiting one makes room, or we wait a little
            if not self.close_oldest_waiting():
                time.sleep(0.05)
            return
        with self.served_lock:
            full = len(self.waiting) + len(self.served) >= self.max_open
        if full and not self.close_oldest_waiting():
            conn.close()  # every slot holds a request being answered: refuse
            return
        conn.setblocking(False)  # this thread reads what has come, and never waits for more
        self.waiting[conn] = Waiting(client, time.monotonic() + self.idle_timeout)
        self.selector.register(conn, selectors.EVENT_READ)

    def read_head(self, conn):
        """Take what the client sent: a complete head goes to a worker, an
        oversize one gets 431; a hang-up before the end is closed."""
        waiting = self.waiting[conn]
        try:
            chunk = conn.recv(self.head_limit + 1 - len(waiting.head))
        except BlockingIOError:
            return
        except OSError:  # reset
            chunk = b""
        if not chunk:
            self.close_waiting(conn)
            return
        if not waiting.head:  # its request began: the deadline for the whole head starts now
            waiting.deadline = time.monotonic() + self.request_deadline
        searched_to = max(0, len(waiting.head) - 2)  # a blank line may straddle two reads
        waiting.head += chunk
        if head_ends(waiting.head, searched_to):
            self.hand_over(conn)
        elif len(waiting.head) > self.head_limit:
            self.refuse(conn, 431, "Request Header Fields Too Large", f"request head over {self.head_limit} bytes\n")

    def forget_waiting(self, conn):
        self.selector.unregister(conn)
        return self.waiting.pop(conn)

    def close_waiting(self, conn):
        self.forget_waiting(conn)
        conn.close()

    def refuse(self, conn, status, phrase, text):
        self.forget_waiting(conn)
        try:
            conn.send(plain_answer(status, phrase, text))  # a few hundred bytes: the socket's buffer takes them
        except OSError:
            pass
        conn.close()

    def close_oldest_waiting(self):
        if not self.waiting:
            return False
        self.close_waiting(next(iter(self.waiting)))
        return True

    def close_late(self, now):
        """Close the silent past IDLE_TIMEOUT and the incomplete past REQUEST_DEADLINE."""
        for conn in [conn for conn, waiting in self.waiting.items() if waiting.deadline <= now]:
            self.close_waiting(conn)

    def hand_over(self, conn):
        """A connection's head is complete: a worker serves it."""
        waiting = self.forget_waiting(conn)
        conn.setblocking(True)  # the worker's reads and writes wait, within their timeouts
        with self.served_lock:
            self.served[conn] = bytes(waiting.head)
        self.pool.submit(self.serve_connection, conn, waiting.client)

    def take_head(self, conn):
        """The head read for a connection handed over (for its handler)."""
        with self.served_lock:
            return self.served.get(conn, b"")

    def serve_connection(self, conn, client):
        try:
            self.finish_request(conn, client)
        except Exception:
            self.handle_error(conn, client)
        finally:
            with self.served_lock:
                self.served.pop(conn, None)
            self.shutdown_request(conn)

    def handle_error(self, request, client_address):
        """A client that hung up or reset is no error of ours; anything else is printed."""
        if not self.stopping.is_set() and not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def stop(self):
        """Stop serving: no new connection, the waiting ones closed, those being
        served woken from their socket and closed; returns once no worker runs."""
        self.stopping.set()
        self.wake_call.send(b"x")
        if self.thread.ident is not None:
            self.thread.join()
        for conn in list(self.waiting):
            self.close_waiting(conn)
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
