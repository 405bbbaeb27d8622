"""The async machinery of one target: a private event loop in a background thread.

`AzureTarget.search()` is synchronous and thread-safe (the runner calls it from worker
threads); underneath, the async SDK client runs on a loop of its own in a daemon thread
(`Runtime`). The runtime is kept apart from the target so that a `weakref.finalize` can
shut it down when a target is dropped without `close()` (the runtime never points back to
the target). `AsyncTokenAdapter` lets a synchronous token credential serve the async
client.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger("ragdiag.targets.azure")


def needs_env_settings() -> bool:
    """True if the environment holds proxy settings or a netrc file for the HTTP transport.

    With `use_env_settings` (azure-core's default) aiohttp looks up netrc credentials and
    the proxy for every request in a worker thread, about 1 ms of client CPU per request
    on 2 cores. Where there is nothing to find (no proxy from `urllib.request.getproxies`,
    which reads the *_PROXY variables and the system settings on macOS and Windows, and no
    netrc file) the target turns the lookups off; otherwise they stay on, so a proxy or a
    netrc entry is honoured as before. Read when the target is built.
    """
    from urllib.request import getproxies

    if getproxies():
        return True
    if os.environ.get("NETRC"):
        return True
    try:
        home = Path.home()
    except RuntimeError:  # no home directory to hold a netrc file
        return False
    return any((home / name).is_file() for name in (".netrc", "_netrc"))


class AsyncTokenAdapter:
    """Wraps a synchronous TokenCredential for the async client."""

    def __init__(self, cred: Any) -> None:
        self._cred = cred

    async def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(
            None, lambda: self._cred.get_token(*scopes, **kwargs))

    async def close(self) -> None:
        close = getattr(self._cred, "close", None)
        if callable(close):
            close()

    def __repr__(self) -> str:
        return f"AsyncTokenAdapter({type(self._cred).__name__})"


class Runtime:
    """The private event loop, its thread and the async SDK client of one target.

    Kept apart from the target so a `weakref.finalize` can shut it down when a
    target is dropped without `close()` (the holder never points back to it).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.client: Any = None
        self.sem: asyncio.Semaphore | None = None
        self.schema_lock: asyncio.Lock | None = None
        self.closables: list[Any] = []  # e.g. an azure-identity credential we created

    def ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self.lock:
            if self.loop is None or self.loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, daemon=True,
                                          name=f"ragdiag-azure-{self.name}")
                thread.start()
                self.loop, self.thread = loop, thread
            return self.loop

    def shutdown(self) -> None:
        with self.lock:
            loop, thread = self.loop, self.thread
            self.loop = self.thread = None
        if loop is None or loop.is_closed():
            return

        async def _close() -> None:
            client, self.client, self.sem, self.schema_lock = self.client, None, None, None
            for obj in ([client] if client is not None else []) + self.closables:
                try:
                    res = obj.close()
                    if inspect.isawaitable(res):
                        await res
                except Exception:  # closing must not raise
                    log.debug("error while closing %r", type(obj).__name__, exc_info=True)

        try:
            if loop.is_running():
                asyncio.run_coroutine_threadsafe(_close(), loop).result(timeout=10)
        except Exception:
            log.debug("error while closing the Azure target", exc_info=True)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
            if not loop.is_running():
                loop.close()

