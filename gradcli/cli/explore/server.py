"""The explorer's web server: the standard library's threading HTTP server, on 127.0.0.1.

Why the standard library: the server only hands JSON to the worker and back, which
``http.server`` does with nothing to install; importing it takes 33 ms here, against
104-131 ms for starlette with uvicorn (starlette 1.10, uvicorn 0.54, best of five fresh
processes each), which would also add four packages (starlette, uvicorn, anyio, h11).

Every request must carry the token printed in the address (``?token=``, the
``X-Gradcli-Token`` header, or the cookie the first page load sets), as Jupyter does, and
a Host header naming this server (``127.0.0.1:PORT``, ``localhost:PORT``, or the
``--host`` given): a page on another site cannot reach the server through DNS rebinding.
Bodies are bounded (``MAX_BODY``), connections time out, and at most ``MAX_CONNECTIONS``
are served at once. The computations run in the worker process (``Engine``): one at a
time, each within the request timeout, a newer request of the same page cancelling the
older one.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from gradcli.cli.explore.page import ASSETS

__all__ = ["Engine", "Explorer", "MAX_BODY", "make_token", "serve_until_stopped"]

#: the largest request body read: an expression is at most 10,000 characters
MAX_BODY = 256 << 10
#: connections served at once (a page makes a few); more wait in the listen queue
MAX_CONNECTIONS = 64
#: seconds a connection may stay silent before it is closed
SOCKET_TIMEOUT = 10.0
#: pages remembered for "a newer request cancels the older" (oldest forgotten first)
MAX_PAGES = 256
HEADER = "X-Gradcli-Token"


def make_token() -> str:
    """A fresh random token (32 bytes, URL-safe)."""
    return secrets.token_urlsafe(32)


class Engine:
    """The worker process and its rules: one computation at a time; a computation runs at
    most ``timeout`` seconds; a newer request of the same page cancels the older one (the
    worker is ended and a new one started)."""

    def __init__(self, timeout: float, memory: int, max_points: int | None = None,
                 cap: bool = True, physical: dict[str, Any] | None = None) -> None:
        from gradcli.evaluation import DEFAULT_MAX_POINTS

        self.timeout, self.memory, self.cap = timeout, memory, cap
        #: --max-points: set here for every request (a page cannot raise it)
        self.max_points = DEFAULT_MAX_POINTS if max_points is None else max_points
        #: the command line's units and to: set here for every request (the page's
        #: values and columns are in them)
        self.physical = dict(physical or {})
        self._lock = threading.Lock()      # held while a computation runs
        self._book = threading.Lock()      # guards the tickets and the worker handle
        self._latest: dict[str, int] = {}  # page -> its newest request's ticket
        self._ticket = 0
        self._worker: tuple[Any, Any] | None = None
        self._context: Any = None
        self.closed = False

    def _start(self) -> tuple[Any, Any]:
        import multiprocessing

        from gradcli.cli.explore.worker import PRELOAD, serve

        if self._context is None:
            self._context = multiprocessing.get_context("forkserver")
            self._context.set_forkserver_preload(PRELOAD)
        here, there = self._context.Pipe()
        process = self._context.Process(target=serve, args=(there, os.getpid(), self.memory,
                                                            self.cap),
                                        name="gradcli-explore-worker", daemon=True)
        process.start()
        there.close()
        return process, here

    def warm(self) -> None:
        """Start the worker now (in the background), so the first request finds it."""
        def start() -> None:
            with self._lock:
                self._ensure()
        threading.Thread(target=start, daemon=True).start()

    def _ensure(self) -> tuple[Any, Any]:
        if self._worker is None or not self._worker[0].is_alive():
            self._end()
            self._worker = self._start()
        return self._worker

    def _end(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            process, connection = worker
            if process.is_alive():
                process.kill()
            process.join(2)
            connection.close()

    def cancel(self, page: str) -> None:
        """The page's computation, running or waiting, is cancelled (it was closed)."""
        with self._book:
            self._ticket += 1
            self._latest[page] = self._ticket

    def _newest(self, page: str, ticket: int) -> bool:
        return self._latest.get(page) == ticket

    def run(self, page: str, kind: str, payload: Any) -> tuple[int, bytes]:
        """(status, JSON body) of one computation for ``page``."""
        with self._book:
            self._ticket += 1
            ticket = self._latest[page] = self._ticket
            while len(self._latest) > MAX_PAGES:
                self._latest.pop(next(iter(self._latest)))
        begun = time.monotonic()
        while not self._lock.acquire(timeout=0.01):
            if not self._newest(page, ticket):
                return _superseded()
            if time.monotonic() - begun > self.timeout:
                return _answer(503, "the server is busy with another page's computation: "
                               "try again")
        try:
            if self.closed:
                return _answer(503, "the server is stopping")
            if not self._newest(page, ticket):
                return _superseded()
            process, connection = self._ensure()
            if isinstance(payload, dict):
                payload = payload | {"max_points": self.max_points} | self.physical
            try:
                connection.send((kind, payload))
            except OSError:  # the worker died between two requests: a fresh one
                self._end()
                process, connection = self._ensure()
                connection.send((kind, payload))
            started = time.monotonic()
            while True:
                if connection.poll(0.005):
                    try:
                        status, body = connection.recv()
                    except (EOFError, OSError):
                        self._end()
                        return _answer(500, "the computation ended without an answer "
                                       "(out of memory?): the next request starts afresh")
                    return status, body
                if not process.is_alive():
                    self._end()
                    return _answer(500, "the computation ended without an answer (out of "
                                   "memory?): the next request starts afresh")
                if not self._newest(page, ticket):
                    self._end()
                    return _superseded()
                if time.monotonic() - started > self.timeout:
                    self._end()
                    return _answer(408, f"the computation took longer than "
                                   f"--request-timeout {self.timeout:g} s and was stopped: "
                                   "use fewer grid points, fewer steps or a simpler formula "
                                   "(or a longer --request-timeout)")
        finally:
            self._lock.release()

    def close(self) -> None:
        """End the worker (and with it any computation): the server is stopping."""
        self.closed = True
        with self._book:
            self._ticket += 1
            for page in self._latest:
                self._latest[page] = -1
        self._lock.acquire(timeout=2)
        self._end()


def _answer(status: int, message: str, kind: str = "server") -> tuple[int, bytes]:
    return status, json.dumps({"error": f"gradcli: error: {message}", "kind": kind}).encode()


def _superseded() -> tuple[int, bytes]:
    return 409, json.dumps({"error": "superseded by a newer request of this page",
                            "kind": "superseded"}).encode()


class Explorer(ThreadingHTTPServer):
    """The server: its token, the hosts it answers to, the page's first view and the
    engine."""

    daemon_threads = True
    request_queue_size = 64

    def __init__(self, host: str, port: int, token: str, engine: Engine,
                 initial: dict[str, Any], extra_host: str | None = None) -> None:
        super().__init__((host, port), Handler)
        self.token, self.engine, self.initial = token, engine, initial
        self.port = self.server_address[1]
        self.hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}",
                      f"[::1]:{self.port}"}
        if extra_host:
            self.hosts.add(f"{extra_host}:{self.port}".lower())
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._assets: dict[str, bytes] = {}

    @property
    def url(self) -> str:
        """The address to open, token included."""
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)  # too many at once: this one is dropped
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A broken connection is the client's business: no traceback on stderr."""

    def asset(self, name: str) -> bytes:
        """plotly.js (from the installed plotly package) and the page's own files, read
        once (plotly.js in the background at start, so the first page finds it)."""
        if name not in self._assets:
            if name == "plotly.min.js":
                from gradcli.plot.html import plotly_js

                self._assets[name] = plotly_js().encode("utf-8")
            else:
                from gradcli.cli.explore.page import asset

                self._assets[name] = asset(name)
        return self._assets[name]


#: what every answer says about itself: no caching, no sniffing, no framing, no referrer
_SECURITY = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; "
    "font-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
}
#: the files the page loads: plotly.js and the page's own (``page.ASSETS``)
_TYPES = {"plotly.min.js": "text/javascript"} | {
    name: "text/css" if name.endswith(".css") else "text/javascript" for name in ASSETS}


class Handler(BaseHTTPRequestHandler):
    """One request: the Host and the token checked, then the page, a script, or a
    computation."""

    server: Explorer
    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT
    server_version = "gradcli-explore"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """Quiet: the terminal shows the address and errors only."""

    def _send(self, status: int, body: bytes, content_type: str = "application/json",
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type + ("; charset=utf-8" if
                                                         "json" in content_type or "html" in
                                                         content_type or "javascript" in
                                                         content_type else ""))
        self.send_header("Content-Length", str(len(body)))
        for key, value in (_SECURITY | (extra or {})).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _refuse(self, status: int, message: str) -> None:
        body = json.dumps({"error": f"gradcli: error: {message}", "kind": "refused"}).encode()
        self.close_connection = True
        self._send(status, body)

    def _cookie_name(self) -> str:
        return f"gradcli-explore-{self.server.port}"

    def _token(self, query: dict[str, list[str]]) -> str | None:
        given = query.get("token", [None])[0] or self.headers.get(HEADER)
        if given:
            return given
        try:
            jar = SimpleCookie(self.headers.get("Cookie", ""))
        except CookieError:
            return None
        morsel = jar.get(self._cookie_name())
        return morsel.value if morsel is not None else None

    def _allowed(self) -> dict[str, list[str]] | None:
        """The query if the Host and the token are right; else answer 403 and None."""
        host = (self.headers.get("Host") or "").strip().lower()
        if host not in self.server.hosts:
            self._refuse(403, "this server answers only to its own address "
                         f"(127.0.0.1:{self.server.port}); the Host header named another")
            return None
        parts = urlsplit(self.path)
        try:
            query = parse_qs(parts.query, max_num_fields=20)
        except ValueError:
            self._refuse(400, "too many fields in the address")
            return None
        token = self._token(query)
        if not token or not secrets.compare_digest(token.encode("utf-8", "replace"),
                                                   self.server.token.encode()):
            self._refuse(403, "a request needs the token of the address gradcli explore "
                         "printed (…/?token=…)")
            return None
        return query

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        query = self._allowed()
        if query is None:
            return
        path = urlsplit(self.path).path
        if path == "/":
            from gradcli.cli.explore.page import page_html

            body = page_html(self.server.initial, self.server.token).encode("utf-8")
            cookie = (f"{self._cookie_name()}={self.server.token}; Path=/; HttpOnly; "
                      "SameSite=Strict")
            self._send(200, body, "text/html", {"Set-Cookie": cookie})
        elif path.lstrip("/") in _TYPES:
            name = path.lstrip("/")
            try:
                body = self.server.asset(name)
            except Exception as exc:  # plotly missing: say so
                self._refuse(500, str(exc))
                return
            self._send(200, body, _TYPES[name], {"Cache-Control": "private, max-age=600"})
        elif path == "/favicon.ico":
            self._send(204, b"", "image/x-icon")
        else:
            self._refuse(404, f"no such page '{path[:60]}'")

    do_HEAD = do_GET

    def do_POST(self) -> None:  # noqa: N802 - the base class's name
        if self._allowed() is None:
            return
        path = urlsplit(self.path).path
        if not path.startswith("/api/"):
            self._refuse(404, f"no such request '{path[:60]}'")
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._refuse(411, "a request needs a Content-Length")
            return
        if length < 0 or length > MAX_BODY:
            self._refuse(413, f"the request is over {MAX_BODY // 1024} KiB")
            return
        raw = self.rfile.read(length)
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            self._refuse(400, "the request is not JSON")
            return
        if not isinstance(payload, dict):
            self._refuse(400, "the request must be a JSON object")
            return
        page = payload.get("page")
        if not isinstance(page, str) or not 0 < len(page) <= 64:
            self._refuse(400, "the request must name its page ('page': an id)")
            return
        kind = path[len("/api/"):]
        if kind == "cancel":
            self.server.engine.cancel(page)
            self._send(200, b"{}")
            return
        status, body = self.server.engine.run(page, kind, payload)
        self._send(status, body)

    def _method_not_allowed(self) -> None:
        self._refuse(405, f"{self.command[:10]} is not served")

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _method_not_allowed


def serve_until_stopped(server: Explorer) -> None:
    """Serve until a signal (the console script turns SIGINT, SIGTERM and SIGHUP into an
    interrupt raised here); then close the socket and end the worker."""
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.engine.close()
        server.server_close()

