"""A real HTTP server on 127.0.0.1 for the reliability tests and the load benchmark.

uvicorn (its pure-Python h11 protocol) runs a tiny ASGI app in a background thread, on a
port the system picks. The app serves two kinds of paths:

- ``/body/<key>``: a body registered with :meth:`LoopbackServer.add_body`, sent in one
  piece, as fast as the server can.
- ``/plan/<key>``: a :class:`Plan` registered with :meth:`LoopbackServer.add_plan`, a
  script of steps (send these bytes, wait at a gate the test opens, drop the connection,
  stall until the client leaves) that records what happened: whether the request
  arrived, whether the server reached its stall (everything before it sent), whether the
  whole body was sent, and whether the client went away before it was (the ASGI
  ``http.disconnect`` message).

The server thread and the test talk through :mod:`threading` events and thread-safe
loop calls, so a test on asyncio or trio can hand-shake with the server without timing.

Run as a script (``python tests/loopback.py DIR``) it serves every file of ``DIR`` as
``/body/<file name>`` until killed and prints its URL on the first line of stdout; the
load benchmark uses it to keep the server out of the measured process.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio
import uvicorn

__all__ = [
    "Drop",
    "Gate",
    "LoopbackServer",
    "Pause",
    "Plan",
    "Send",
    "Stall",
    "Step",
    "wait_for",
]

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
SendMessage = Callable[[Message], Awaitable[None]]

# A safety net, not a measurement: a handshake that never completes fails the test
# after this long instead of hanging the run.
HANDSHAKE_TIMEOUT: Final = 20.0


class Gate:
    """A point in one or more :class:`Plan` s where the server waits until the test
    opens it.

    ``reached`` is set when a server task arrives at the gate; :meth:`open` (from any
    thread) lets every waiting task go on, and any later one pass.
    """

    def __init__(self) -> None:
        self.reached = threading.Event()
        self._lock = threading.Lock()
        self._opened = False
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    @property
    def is_open(self) -> bool:
        return self._opened

    def open(self) -> None:
        with self._lock:
            self._opened = True
            waiters, self._waiters = self._waiters, []
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    async def wait(self) -> None:
        """Server side: block until the gate is opened."""
        event = asyncio.Event()
        with self._lock:
            if self._opened:
                event.set()
            else:
                self._waiters.append((asyncio.get_running_loop(), event))
        self.reached.set()
        await event.wait()


@dataclass(frozen=True)
class Send:
    """Send these bytes as one piece of the body."""

    data: bytes


@dataclass(frozen=True)
class Pause:
    """Wait at this gate until the test opens it."""

    gate: Gate


@dataclass(frozen=True)
class Drop:
    """Close the connection in the middle of the body (the app raises; uvicorn then
    closes the socket without ending the chunked body)."""


@dataclass(frozen=True)
class Stall:
    """Send nothing more, and keep the connection open until the client leaves."""


Step = Send | Pause | Drop | Stall


@dataclass
class Plan:
    """How to answer one request, and what happened while answering it."""

    steps: Sequence[Step]
    content_type: str = "text/event-stream"
    arrived: threading.Event = field(default_factory=threading.Event)
    stalled: threading.Event = field(default_factory=threading.Event)
    completed: threading.Event = field(default_factory=threading.Event)
    disconnected: threading.Event = field(default_factory=threading.Event)
    sent: int = 0


class _Dropped(Exception):
    """Raised by the app to make uvicorn cut the connection mid-body."""


class _App:
    """The ASGI app: serves registered bodies and plans."""

    def __init__(self) -> None:
        self.bodies: dict[str, tuple[str, bytes]] = {}
        self.plans: dict[str, Plan] = {}
        # Set on the server's loop when the server stops, so that stalls end.
        self.closing: asyncio.Event | None = None

    async def __call__(self, scope: Message, receive: Receive, send: SendMessage) -> None:
        if scope["type"] != "http":
            return  # lifespan is off; nothing else is expected
        await _read_request(receive)
        kind, _, key = scope["path"].lstrip("/").partition("/")
        if kind == "body" and key in self.bodies:
            content_type, body = self.bodies[key]
            await _start(send, 200, content_type)
            await send({"type": "http.response.body", "body": body, "more_body": False})
        elif kind == "plan" and key in self.plans:
            await self._play(self.plans[key], receive, send)
        else:
            await _start(send, 404, "text/plain")
            await send({"type": "http.response.body", "body": b"not found"})

    async def _play(self, plan: Plan, receive: Receive, send: SendMessage) -> None:
        plan.arrived.set()
        gone = asyncio.Event()
        watcher = asyncio.get_running_loop().create_task(_watch(plan, receive, gone))
        try:
            await _start(send, 200, plan.content_type)
            for step in plan.steps:
                match step:
                    case Send(data):
                        await send({"type": "http.response.body", "body": data, "more_body": True})
                        plan.sent += len(data)
                    case Pause(gate):
                        await _first(gate.wait(), gone.wait())
                        if gone.is_set():
                            return
                    case Drop():
                        raise _Dropped("the plan drops the connection here")
                    case Stall():
                        plan.stalled.set()
                        waits = [gone.wait()]
                        if self.closing is not None:
                            waits.append(self.closing.wait())
                        await _first(*waits)
                        return
            plan.completed.set()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            watcher.cancel()


async def _read_request(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            return


async def _start(send: SendMessage, status: int, content_type: str) -> None:
    headers = [(b"content-type", content_type.encode()), (b"cache-control", b"no-cache")]
    await send({"type": "http.response.start", "status": status, "headers": headers})


async def _watch(plan: Plan, receive: Receive, gone: asyncio.Event) -> None:
    """Wait for ``http.disconnect``; uvicorn also sends it once the response is complete,
    so only a disconnect before that counts as the client leaving."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            if not plan.completed.is_set():
                plan.disconnected.set()
            gone.set()
            return


async def _first(*waits: Awaitable[Any]) -> None:
    """Wait until the first of these finishes; cancel the others."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


class LoopbackServer:
    """uvicorn on 127.0.0.1, on a free port, in a background thread.

    Use as a context manager, or call :meth:`start` and :meth:`stop`.
    """

    def __init__(self) -> None:
        self.app = _App()
        # proto=IPPROTO_TCP, not the default 0: asyncio disables Nagle's algorithm only on
        # sockets that say they are TCP, and accepted sockets inherit the listener's
        # proto. With Nagle on, each write after the first waits for the client's
        # delayed ACK (40 ms).
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            self.app,
            http="h11",
            lifespan="off",
            log_config=None,
            log_level="critical",  # the dropped connections are deliberate
            access_log=False,
            backlog=4096,
            # Under a thousand busy connections the loop can lag for seconds: a short
            # keep-alive timeout would then close connections whose next request is
            # already in the socket, and the client would see a reset.
            timeout_keep_alive=300,
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._run, name="loopback-server", daemon=True)
        self._keys = itertools.count()

    def add_body(self, body: bytes, content_type: str = "text/event-stream") -> str:
        """Register a body; return its URL."""
        key = str(next(self._keys))
        self.app.bodies[key] = (content_type, body)
        return f"{self.url}/body/{key}"

    def add_plan(self, plan: Plan) -> str:
        """Register a plan; return its URL."""
        key = str(next(self._keys))
        self.app.plans[key] = plan
        return f"{self.url}/plan/{key}"

    def start(self) -> LoopbackServer:
        self._thread.start()
        deadline = time.monotonic() + HANDSHAKE_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the loopback server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        loop, closing = self._loop, self.app.closing
        if loop is not None and closing is not None and not loop.is_closed():
            loop.call_soon_threadsafe(closing.set)
        self._server.should_exit = True
        self._thread.join(HANDSHAKE_TIMEOUT)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.app.closing = asyncio.Event()
        await self._server.serve(sockets=[self._sock])


async def wait_for(event: threading.Event, what: str) -> None:
    """Wait (asyncio or trio) until the server thread sets ``event``."""
    deadline = time.monotonic() + HANDSHAKE_TIMEOUT
    while not event.is_set():
        if time.monotonic() > deadline:
            raise AssertionError(f"the server never reported: {what}")
        await anyio.sleep(0.002)


def _serve_directory(directory: Path) -> None:
    """Serve every file of ``directory`` as ``/body/<name>`` until killed."""
    server = LoopbackServer()
    for path in sorted(directory.iterdir()):
        content_type = "application/x-ndjson" if path.suffix == ".ndjson" else "text/event-stream"
        server.app.bodies[path.name] = (content_type, path.read_bytes())
    with server:
        print(server.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    _serve_directory(Path(sys.argv[1]))
