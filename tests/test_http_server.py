"""The background HTTP server's lifecycle: start, serve, stop, a port already taken, a start that fails."""

from __future__ import annotations

import socket
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from ragdiag.errors import ConfigError
from ragdiag.http_server import (
    BackgroundHandler,
    BackgroundHTTPServer,
    BackgroundServer,
    wait_for_interrupt,
)


class _Hello(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        data = self.server.owner.greeting.encode()  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(BackgroundServer):
    """Records its hooks, so a test sees what was opened and closed."""

    handler = _Hello
    thread_name = "ragdiag-test-http"
    join_timeout_s = 2.0

    def __init__(self, *, port: int = 0, fail_in_prepare: bool = False) -> None:
        super().__init__(port=port)
        self.greeting = "hello"
        self.calls: list[str] = []
        self.fail_in_prepare = fail_in_prepare
        self.stop_worker = threading.Event()

    def _open(self) -> None:
        self.calls.append("open")

    def _prepare(self, server: BackgroundHTTPServer) -> None:
        self.calls.append("prepare")
        self.bound_port = server.server_address[1]
        if self.fail_in_prepare:
            raise RuntimeError("TLS certificate unreadable")

    def _workers(self) -> list[threading.Thread]:
        return [threading.Thread(target=self.stop_worker.wait, name="ragdiag-test-worker", daemon=True)]

    def _stopping(self) -> None:
        self.calls.append("stopping")
        self.stop_worker.set()

    def _close(self) -> None:
        self.calls.append("close")


def _get(url: str) -> str:
    with urllib.request.urlopen(url + "/", timeout=5) as r:
        return r.read().decode()


def _threads_named(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


def _free(port: int) -> bool:
    """Nothing listens on the port (a connection closed a moment ago may linger in TIME_WAIT)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_start_serves_from_a_thread_and_stop_ends_it():
    srv = _Server()
    assert srv.url is None and not srv.running
    url = srv.start()
    assert url == srv.url == f"http://127.0.0.1:{srv.bound_port}" and srv.bound_port != 0  # port 0: the system's
    assert srv.start() == url  # a second start is the same server
    assert _get(url) == "hello"
    assert _threads_named("ragdiag-test-")
    srv.stop()
    assert srv.url is None and not srv.running
    assert srv.calls == ["open", "prepare", "stopping", "close"]
    assert not _threads_named("ragdiag-test-")  # the serving thread and the worker are joined
    assert _free(srv.bound_port)  # the socket is closed
    srv.stop()  # stopping twice is harmless
    assert srv.calls == ["open", "prepare", "stopping", "close"]


def test_a_port_in_use_is_a_config_error_and_leaves_nothing_open():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        srv = _Server(port=port)
        with pytest.raises(ConfigError, match=f"127.0.0.1:{port}: the port is already in use.*--port"):
            srv.start()
    assert not srv.running and srv.calls == []  # bound first: nothing was opened
    assert not _threads_named("ragdiag-test-")


def test_a_start_that_fails_after_binding_closes_the_socket():
    srv = _Server(fail_in_prepare=True)
    with pytest.raises(RuntimeError, match="TLS"):
        srv.start()
    assert not srv.running and srv.calls == ["open", "prepare", "close"]  # no worker started, none told to stop
    assert _free(srv.bound_port)
    srv.fail_in_prepare = False
    assert _get(srv.start()) == "hello"  # and it can start afterwards
    srv.stop()


def test_an_error_inside_the_with_block_stops_the_server():
    with pytest.raises(ValueError), _Server() as srv:
        assert _get(srv.url) == "hello"
        raise ValueError("the caller's code failed")
    assert not srv.running and srv.calls[-2:] == ["stopping", "close"]
    assert not _threads_named("ragdiag-test-") and _free(srv.bound_port)


def test_serve_forever_returns_when_stopped_from_another_thread():
    srv = _Server()
    done = threading.Event()

    def serve() -> None:
        srv.serve_forever()
        done.set()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    for _ in range(100):
        if srv.running:
            break
        threading.Event().wait(0.02)
    assert _get(srv.url) == "hello"
    srv.stop()
    assert done.wait(5) and srv.calls.count("close") == 1


def test_the_three_servers_share_the_lifecycle():
    from ragdiag.observe.otlp import OtlpReceiver
    from ragdiag.observe.proxy import RecordingProxy
    from ragdiag.targets.emulator.server import Emulator

    for cls in (OtlpReceiver, RecordingProxy, Emulator):
        assert issubclass(cls, BackgroundServer) and issubclass(cls.server_class, BackgroundHTTPServer), cls
        for name in ("start", "stop", "url", "__enter__", "__exit__", "serve_forever"):
            assert name not in vars(cls) or (cls is Emulator and name == "start"), (cls, name)


def test_a_receiver_on_a_taken_port_keeps_the_previous_recording(tmp_path):
    from ragdiag.observe.otlp import OtlpReceiver

    out = tmp_path / "traces.jsonl"
    out.write_text('{"resourceSpans": []}\n', encoding="utf-8")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match="already in use.*--otlp"):
            OtlpReceiver(out=out, port=port).start()
    assert out.read_text(encoding="utf-8") == '{"resourceSpans": []}\n'


class _Echo(BackgroundHandler):
    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self.send_bytes(201, b"body", "text/plain", [("X-Test", "1")])

    do_HEAD = do_GET

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self.send_bytes(204, b"", "")


class _EchoServer(BackgroundServer):
    handler = _Echo


def test_the_handler_sends_type_length_and_headers_and_no_body_for_head():
    import http.client

    with _EchoServer() as srv:
        host, port = srv.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        for method, status, body in (("GET", 201, b"body"), ("HEAD", 201, b""), ("POST", 204, b"")):
            conn.request(method, "/")  # one keep-alive connection (HTTP/1.1) for all three
            r = conn.getresponse()
            assert (r.status, r.read()) == (status, body), method
            assert r.getheader("Content-Length") == ("0" if method == "POST" else "4")
            assert r.getheader("Content-Type") == (None if method == "POST" else "text/plain")
            assert r.getheader("X-Test") == (None if method == "POST" else "1")
        conn.close()


def test_wait_for_interrupt_returns_on_ctrl_c(monkeypatch):
    import time

    def interrupted(_s: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(time, "sleep", interrupted)
    wait_for_interrupt()  # returns, does not raise
