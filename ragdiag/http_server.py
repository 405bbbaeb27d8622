"""One lifecycle for ragdiag's loopback HTTP servers: bind, serve from a thread, answer, stop.

The emulator (`ragdiag serve`), the recording proxy (`ragdiag record`) and the OTLP receiver
(`ragdiag record --otlp`) each answer HTTP from a background thread while the caller goes on
(a test, a notebook, the CLI's wait loop). `BackgroundServer` holds what they share: binding
(a port already taken is the caller's input, `ConfigError`, not a traceback), the serving
thread, the URL, an idempotent `start`/`stop`, the context manager, and cleaning up whatever
was opened when starting fails half way. Subclasses name their request handler and fill the
hooks: `_open` (the files the handlers write), `_prepare` (the bound socket: TLS),
`_workers` (further threads), `_stopping` (wake them) and `_close`. Their request handlers
derive from `BackgroundHandler` (keep-alive, quiet logging, `send_bytes`).
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
import time
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self

from ragdiag.errors import ConfigError


class BackgroundHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive, the request line logged at debug level to `log` (never a header, so
    never a key), and one way to send a reply (`send_bytes`)."""

    protocol_version = "HTTP/1.1"
    sys_version = ""
    log: ClassVar[logging.Logger] = logging.getLogger("ragdiag.http")
    #: headers and body go out in separate writes; without TCP_NODELAY, Nagle and delayed ACKs
    #: stall every keep-alive response by ~40 ms (measured on the emulator: 62 ms vs 16 ms a request)
    tcp_nodelay: ClassVar[bool] = False

    def setup(self) -> None:
        super().setup()
        if self.tcp_nodelay:
            try:
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        self.log.debug("%s %s", self.address_string(), format % args)

    def send_bytes(self, status: int, data: bytes, content_type: str,
                   headers: Iterable[tuple[str, str]] = ()) -> None:
        """Status, Content-Type (when given), Content-Length, `headers`, then `data` (not for HEAD)."""
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)


class BackgroundHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server whose handler threads never keep the process alive.

    `owner` is the `BackgroundServer` that serves through it: handlers reach it as
    ``self.server.owner``.
    """

    daemon_threads = True
    allow_reuse_address = True  # a restart binds again at once (TIME_WAIT), a live listener still refuses
    owner: Any = None


class BackgroundServer:
    """A `BackgroundHTTPServer` served from a daemon thread: `start()` returns the URL, `stop()` ends it.

    >>> with MyServer(host="127.0.0.1", port=0) as srv:   # port 0: any free port
    ...     urllib.request.urlopen(srv.url + "/")
    """

    handler: ClassVar[type[BaseHTTPRequestHandler]]
    server_class: ClassVar[type[BackgroundHTTPServer]] = BackgroundHTTPServer
    thread_name: ClassVar[str] = "ragdiag-http"
    #: how long `stop()` waits for each thread
    join_timeout_s: ClassVar[float] = 5.0
    #: what the port is called in the command line, for the port-in-use message
    port_option: ClassVar[str] = "--port"

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host, self.port = host, port
        self._server: BackgroundHTTPServer | None = None
        self._threads: list[threading.Thread] = []

    # ---- hooks -------------------------------------------------------------------------------
    @property
    def scheme(self) -> str:
        return "http"

    def _open(self) -> None:
        """The socket is bound: open what the handlers write to (closed by `_close`)."""

    def _prepare(self, server: BackgroundHTTPServer) -> None:
        """After `_open`, nothing is served yet: wrap the socket in TLS."""

    def _workers(self) -> list[threading.Thread]:
        """Further threads to start with the serving one (not yet started)."""
        return []

    def _stopping(self) -> None:
        """The server has stopped accepting: tell the workers to finish."""

    def _close(self) -> None:
        """Everything has stopped (or starting failed): close what `_open` opened."""

    # ---- lifecycle ---------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def url(self) -> str | None:
        """``scheme://host:port`` while serving (the port the system chose for port 0), else None."""
        if self._server is None:
            return None
        host, port = self._server.server_address[:2]
        host = f"[{host}]" if ":" in str(host) else host
        return f"{self.scheme}://{host}:{port}"

    def start(self) -> str:
        """Bind and serve from a background thread; the URL. A second call returns the same URL."""
        if self._server is not None:
            return self.url  # type: ignore[return-value]
        server = self._bind()  # first: a port in use must not truncate the file a previous run wrote
        opened = False
        started: list[threading.Thread] = []
        try:
            self._open()
            opened = True
            server.owner = self
            self._prepare(server)
            threads = [*self._workers(), threading.Thread(target=server.serve_forever,
                                                          kwargs={"poll_interval": 0.1},
                                                          name=self.thread_name, daemon=True)]
            for t in threads:
                t.start()
                started.append(t)
        except BaseException:
            # nothing half-started stays behind: no bound socket, no thread, no open file
            server.server_close()
            if started:  # the serving thread starts last: these are workers, tell them to end
                self._stopping()
                for t in started:
                    t.join(timeout=self.join_timeout_s)
            if opened:
                self._close()
            raise
        self._server, self._threads = server, threads
        return self.url  # type: ignore[return-value]

    def _bind(self) -> BackgroundHTTPServer:
        try:
            return self.server_class((self.host, self.port), self.handler)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigError(f"cannot listen on {self.host}:{self.port}: the port is already in use (by "
                                  f"another program, or a ragdiag still running); stop that, or choose another "
                                  f"{self.port_option} (0 takes any free port)") from exc
            raise ConfigError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}; expected a "
                              f"local address and a free port ({self.port_option} 0 takes any free one)") from exc

    def stop(self) -> None:
        """Stop serving, wait for the threads, close what was opened. Safe to call twice."""
        server, self._server = self._server, None
        if server is None:
            return
        try:
            server.shutdown()
            server.server_close()
            self._stopping()
            for t in self._threads:
                t.join(timeout=self.join_timeout_s)
        finally:
            self._threads = []
            self._close()

    def serve_forever(self) -> None:
        """Start (if needed) and block until interrupted, then stop."""
        self.start()
        try:
            while any(t.is_alive() for t in self._threads):
                for t in self._threads:
                    t.join(timeout=0.5)
        finally:
            self.stop()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def wait_for_interrupt(poll_s: float = 0.5) -> None:
    """Block the calling (main) thread until Ctrl-C; the KeyboardInterrupt ends the wait, nothing more."""
    try:
        while True:
            time.sleep(poll_s)
    except KeyboardInterrupt:
        pass


__all__ = ["BackgroundHTTPServer", "BackgroundHandler", "BackgroundServer", "wait_for_interrupt"]
