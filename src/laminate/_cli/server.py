"""A mock provider: answers chat requests with recorded streams, on loopback.

``MockProvider`` is a small ASGI app (no framework); :func:`mock_server` runs it with
uvicorn (the optional ``demo`` extra) in a thread and yields its base URL.

Endpoints, and where their recordings live inside the served directory::

    POST /v1/chat/completions   DIR/openai/<name>.sse             stream defaults to false
    POST /v1/responses          DIR/openai-responses/<name>.sse   stream defaults to false
    POST /v1/messages           DIR/anthropic/<name>.sse          stream defaults to false
    POST /api/chat              DIR/ollama/<name>.ndjson          stream defaults to true
    POST /v2/chat               DIR/cohere/<name>.sse             stream defaults to false
    POST /model/{id}/converse-stream  DIR/bedrock/<name>.eventstream  always streams (binary)
    POST /model/{id}/converse         DIR/bedrock/<name>.eventstream  never streams
    POST /v1beta/models/{model}:streamGenerateContent  DIR/gemini/<name>.sse  SSE with
                                ``?alt=sse``, else the same chunks as one JSON array
    POST /v1beta/models/{model}:generateContent        DIR/gemini/<name>.sse  never streams
    GET  /                      the recordings, as JSON

A request gets the first recording that matches, in this order:

1. the header ``X-Laminate-Fixture: <name>`` (404 if there is no such recording);
2. the request's ``model`` (Bedrock's: the one in the path), when a recording has exactly
   that name;
3. the turn: the number of model turns already in the conversation (runs of entries in
   ``messages``, or in a Responses ``input``, not from the user, system or developer).
   Turn 0 gets the first recording in sorted name order, turn 1 the second, and so on;
   past the last recording, the last one. So ``1-tool-call.sse`` then ``2-answer.sse``
   play a two-turn tool loop.

A streaming request gets the recording's bytes exactly as stored, frame by frame,
``pace`` seconds apart. A non-streaming request gets ``<name>.body.json`` when it
exists, otherwise a complete body built from the normalized stream (a recording that
ends in a provider error is answered with that error and a 4xx/5xx status).
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio

from .._apis.registry import APIS
from .._apis.spec import Api, Mock, common_error_body
from .._core.errors import LaminateError, ProviderError
from .._core.events import Event
from .._core.extras import missing_extra
from .._framing import MEDIA_TYPES, JSONArrayWriter
from .._io.sources import status_of
from .._normalizer import StreamNormalizer

__all__ = [
    "DEMO_PACE",
    "DEMO_STREAMS",
    "PATHS",
    "PATTERN_ROUTES",
    "PROVIDERS",
    "ROUTES",
    "MockProvider",
    "Recording",
    "choose_recording",
    "find_recordings",
    "mock_server",
    "require_uvicorn",
    "split_frames",
]

DEMO_STREAMS: Final = Path(__file__).resolve().parent / "demo_streams"
DEMO_PACE: Final = 0.012
"""Seconds between frames in ``laminate demo``: about the pace of a fast model."""

Scope = MutableMapping[str, Any]
AsgiMessage = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[AsgiMessage]]
Send = Callable[[AsgiMessage], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Route:
    """Which API answers on an endpoint, and whether it streams when not told."""

    provider: str
    stream_default: bool


PATHS: Final = [
    (endpoint.path, Route(record.name, endpoint.streams), endpoint.model)
    for record in APIS.values()
    if record.mock is not None
    for endpoint in record.mock.endpoints
]
"""Every endpoint: its path (``{model}``: a model the path names), route and model pattern."""
ROUTES: Final[Mapping[str, Route]] = {p: r for p, r, _ in PATHS if "{model}" not in p}
"""The exact paths the APIs answer on (each API's ``Mock.endpoints``)."""
# Paths that name the model are patterns (a fullmatch each, tried after the exact paths).
# The model named in the path takes the place of the request's `model`.
PATTERN_ROUTES: Final[Mapping[re.Pattern[str], Route]] = {
    re.compile(re.escape(p).replace(re.escape("{model}"), f"(?P<model>{m})")): r
    for p, r, m in PATHS
    if "{model}" in p
}
PROVIDERS: Final = tuple(dict.fromkeys(route.provider for _, route, _ in PATHS))
"""Every provider the mock server answers, in the registry's order."""
# Where a conversation may be, the first present wins (`model_turns`).
_TURN_KEYS: Final = tuple(dict.fromkeys(record.turn_key for record in APIS.values()))
_SUFFIX: Final = {"sse": ".sse", "ndjson": ".ndjson", "eventstream": ".eventstream"}
# Where one frame ends: a blank line for SSE (any of its three line ends), a line for NDJSON.
_FRAME_END: Final = {"sse": re.compile(rb"\r\n\r\n|\n\n|\r\r"), "ndjson": re.compile(rb"\n")}
_MAX_REQUEST: Final = 32 * 1024 * 1024
_NOT_USER: Final = frozenset({"user", "system", "developer"})


# -- recordings ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, order=True)
class Recording:
    """One recorded answer: ``DIR/<provider>/<name>.sse`` (or ``.ndjson``)."""

    name: str
    provider: str = field(compare=False)
    stream: Path = field(compare=False)

    @property
    def body(self) -> Path:
        """Where its complete (non-streaming) body would be."""
        return self.stream.with_name(self.name + ".body.json")


def find_recordings(directory: Path, provider: str) -> list[Recording]:
    """The recordings for ``provider`` under ``directory``, in name order."""
    suffix = _SUFFIX[APIS[provider].framing]
    folder = directory / provider
    if not folder.is_dir():
        return []
    return sorted(
        Recording(path.name.removesuffix(suffix), provider, path)
        for path in folder.iterdir()
        if path.name.endswith(suffix) and path.is_file()
    )


class _NoRecording(LookupError):
    pass


def model_turns(request: Mapping[str, Any]) -> int:
    """How many model turns the conversation in ``request`` already holds."""
    key = next((key for key in _TURN_KEYS if key in request), None)
    entries = request[key] if key is not None else None
    if not isinstance(entries, list):
        return 0
    turns, inside = 0, False
    for entry in entries:
        role = entry.get("role") if isinstance(entry, Mapping) else "user"
        # Responses items such as function_call / function_call_output have no role.
        from_model = role not in _NOT_USER
        if from_model and not inside:
            turns += 1
        inside = from_model
    return turns


def choose_recording(
    recordings: list[Recording], request: Mapping[str, Any], fixture: str | None = None
) -> Recording:
    """The recording that answers ``request`` (see the module's documentation)."""
    by_name = {r.name: r for r in recordings}
    if fixture is not None:
        if fixture not in by_name:
            raise _NoRecording(f"no recording named {fixture!r} (X-Laminate-Fixture)")
        return by_name[fixture]
    model = request.get("model")
    if isinstance(model, str) and model in by_name:
        return by_name[model]
    return recordings[min(model_turns(request), len(recordings) - 1)]


def split_frames(data: bytes, framing: str) -> list[bytes]:
    """``data`` cut after each frame; the pieces join back to exactly ``data``."""
    if framing == "eventstream":
        return _split_messages(data)
    pieces, start = [], 0
    for match in _FRAME_END[framing].finditer(data):
        pieces.append(data[start : match.end()])
        start = match.end()
    if start < len(data):
        pieces.append(data[start:])
    return pieces


def _split_messages(data: bytes) -> list[bytes]:
    # Each AWS event stream message starts with its total length (u32, big-endian).
    pieces, start = [], 0
    while len(data) - start >= 4:
        size = max(int.from_bytes(data[start : start + 4], "big"), 4)
        pieces.append(data[start : start + size])
        start += size
    if start < len(data):
        pieces.append(data[start:])
    return pieces


def _route(path: str) -> tuple[Route, str | None] | None:
    """The route of ``path``, and the model its path names (``{model}``), if any."""
    path = path.rstrip("/")
    route = ROUTES.get(path)
    if route is not None:
        return route, None
    for pattern, route in PATTERN_ROUTES.items():
        if found := pattern.fullmatch(path):
            return route, found["model"]
    return None


# -- the ASGI app ------------------------------------------------------------------------


@dataclass(slots=True)
class _Canned:
    """A whole answer, ready to send: its status, content type and pieces (paced: sent
    ``pace`` apart)."""

    status: int
    content_type: str
    chunks: list[bytes]
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    paced: bool = False
    note: str = ""  # what answered, for the request log


def _json_reply(status: int, body: Any) -> _Canned:
    return _Canned(status, "application/json", [json.dumps(body, ensure_ascii=False).encode()])


def _mock_of(provider: str | None) -> Mock | None:
    record: Api | None = APIS.get(provider) if provider is not None else None
    return record.mock if record is not None else None


def _error(provider: str | None, status: int, kind: str, message: str) -> _Canned:
    """An error in the shape the provider's own clients read (no provider, or one the
    server does not answer as: the common shape)."""
    mock = _mock_of(provider)
    error_body = mock.error_body if mock is not None else common_error_body
    reply = _json_reply(status, error_body(status, kind, message))
    reply.note = message
    return reply


class MockProvider:
    """The ASGI app: recordings from ``directory`` (default: the demo streams).

    ``pace`` is the delay between streamed frames in seconds; ``log`` receives one
    line per request.
    """

    def __init__(
        self,
        directory: str | Path | None = None,
        *,
        pace: float = 0.0,
        log: Callable[[str], None] | None = None,
        as_format: str | None = None,
    ) -> None:
        self.directory = Path(directory) if directory is not None else DEMO_STREAMS
        self.pace = pace
        self.log = log
        self.as_format = as_format
        """With a target name (``laminate serve --as``): every endpoint answers from the
        recordings of every provider, re-encoded as that target's stream or body."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        reply = await self._reply(scope, receive)
        if self.log is not None:
            self.log(f"{scope['method']} {scope['path']} -> {reply.status} {reply.note}")
        await _send(reply, send, receive, self.pace if reply.paced else 0.0)

    async def _reply(self, scope: Scope, receive: Receive) -> _Canned:
        method, path = scope["method"], scope["path"]
        if method == "GET" and path == "/":
            return _json_reply(200, self.listing())
        routed = _route(path)
        if routed is None:
            known = ", ".join(f"POST {p}" for p in ROUTES)
            return _error(None, 404, "not_found_error", f"no endpoint {path}; try {known}")
        route, path_model = routed
        provider = route.provider
        if method != "POST":
            return _error(provider, 405, "invalid_request_error", f"{path} takes POST")
        request = await _read_json(receive)
        if not isinstance(request, dict):
            return _error(provider, 400, "invalid_request_error", "the body is not a JSON object")
        if path_model is not None:
            request = {**request, "model": path_model}
        stream = bool(request.get("stream", route.stream_default))
        array = stream and _streams_array(self.as_format or provider, scope)
        if self.as_format is not None:
            fixture = _header(scope, b"x-laminate-fixture")
            return self._translated(request, stream, fixture, array=array)
        try:
            recording = self._choose(provider, request, _header(scope, b"x-laminate-fixture"))
        except _NoRecording as exc:
            return _error(provider, 404, "not_found_error", str(exc))
        if array:  # a JSON array unless the request asks for SSE
            reply = _array_reply(recording.stream.read_bytes())
        else:
            reply = _stream_reply(recording) if stream else _body_reply(recording)
        reply.headers.append((b"x-laminate-fixture", f"{provider}/{recording.name}".encode()))
        reply.note = f"{provider}/{recording.name} ({'stream' if stream else 'body'})"
        return reply

    def _translated(
        self, request: Mapping[str, Any], stream: bool, fixture: str | None, *, array: bool
    ) -> _Canned:
        """``--as``: a recording of any provider (``X-Laminate-Fixture`` takes ``name`` or
        ``provider/name``), written as ``as_format`` (a streamed JSON array: ``array``)."""
        target = shape = self.as_format or ""  # the target's error shape, when it has one
        pool = sorted(r for p in PROVIDERS for r in find_recordings(self.directory, p))
        if fixture is not None and "/" in fixture:
            pool = [r for r in pool if f"{r.provider}/{r.name}" == fixture]
            fixture = fixture.rpartition("/")[2]
        if not pool:
            return _error(shape, 404, "not_found_error", f"no recordings in {self.directory}")
        try:
            recording = choose_recording(pool, request, fixture)
        except _NoRecording as exc:
            return _error(shape, 404, "not_found_error", str(exc))
        reply = _encoded_reply(recording, target, stream or target not in APIS, shape)
        if array and reply.status == 200:
            reply = _array_reply(b"".join(reply.chunks))
        reply.headers.append(
            (b"x-laminate-fixture", f"{recording.provider}/{recording.name}".encode())
        )
        reply.note = f"{recording.provider}/{recording.name} as {target}"
        return reply

    def _choose(self, provider: str, request: Mapping[str, Any], fixture: str | None) -> Recording:
        recordings = find_recordings(self.directory, provider)
        if not recordings:
            raise _NoRecording(f"no recordings in {self.directory / provider}")
        return choose_recording(recordings, request, fixture)

    def listing(self) -> dict[str, list[str]]:
        """The recording names per provider."""
        return {p: [r.name for r in find_recordings(self.directory, p)] for p in PROVIDERS}


def _stream_reply(recording: Recording) -> _Canned:
    framing = APIS[recording.provider].framing
    frames = split_frames(recording.stream.read_bytes(), framing)
    return _Canned(200, MEDIA_TYPES[framing], frames, [(b"cache-control", b"no-cache")], True)


def _streams_array(provider: str, scope: Scope) -> bool:
    """Whether a stream request to ``provider`` gets one JSON array rather than SSE
    (``Http.streams_array``: Gemini without ``alt=sse``)."""
    http = APIS[provider].http if provider in APIS else None
    query = bytes(scope.get("query_string", b"")).decode("latin-1")
    return http is not None and http.streams_array(query)


def _array_reply(sse: bytes) -> _Canned:
    """An SSE stream's events as one streamed JSON array, written element by element."""
    array = JSONArrayWriter()
    pieces = [*array.elements(sse), array.end()]
    return _Canned(200, MEDIA_TYPES["json-array"], pieces, [], True)


def _body_reply(recording: Recording) -> _Canned:
    if recording.body.is_file():
        return _Canned(200, "application/json", [recording.body.read_bytes()])
    normalizer = StreamNormalizer(recording.provider)
    provider = recording.provider
    try:
        normalizer.feed(recording.stream.read_bytes())
        normalizer.close()
    except ProviderError as exc:
        status = status_of(exc)
        if isinstance(exc.raw, Mapping):
            reply = _json_reply(status, exc.raw)
            header = APIS[provider].error_type_header
            if header is not None:  # its clients read the error's type from this header
                reply.headers.append((header.encode(), exc.error_type.encode()))
            return reply
        return _error(provider, status, exc.error_type, exc.message)
    except LaminateError as exc:
        message = f"recording {recording.name!r} has no complete answer: {exc}"
        return _error(provider, 500, "api_error", message)
    if normalizer.response is None:  # close() either completes the response or raises
        return _error(provider, 500, "api_error", f"recording {recording.name!r} gave nothing")
    return _json_reply(200, APIS[normalizer.response.provider].write_body(normalizer.response))


def _encoded_reply(recording: Recording, target: str, stream: bool, shape: str) -> _Canned:
    """A recording normalized, then written as ``target``: a stream paced event by event,
    or a complete body. A recording that ends in an error is answered with that error: in
    the stream, as the target's in-stream error after what came before it, when anything
    did; else as an error status."""
    from .._encode.encoder import StreamEncoder, encode_response

    normalizer = StreamNormalizer(recording.provider)
    events: list[Event] = []
    failure: LaminateError | None = None
    try:
        events += normalizer.feed(recording.stream.read_bytes())  # up to any error
        events += normalizer.close()
    except LaminateError as exc:
        failure = exc
    if failure is not None and not (stream and events):
        status = status_of(failure)
        return _error(shape, status, getattr(failure, "error_type", "api_error"), str(failure))
    if not stream and normalizer.response is not None:
        return _json_reply(200, encode_response(normalizer.response, target))
    encoder = StreamEncoder(target)
    chunks = [data for data in map(encoder.encode, events) if data]
    chunks.append(encoder.close() if failure is None else encoder.error(failure))
    headers = [(k.encode(), v.encode()) for k, v in encoder.headers.items() if k != "content-type"]
    headers.append((b"cache-control", b"no-cache"))
    return _Canned(200, encoder.media_type, chunks, headers, True)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1").strip()
    return None


async def _read_json(receive: Receive) -> Any:
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += message.get("body", b"")
        if len(body) > _MAX_REQUEST or not message.get("more_body", False):
            break
    try:
        return json.loads(body) if len(body) <= _MAX_REQUEST else None
    except ValueError:
        return None


async def _send(reply: _Canned, send: Send, receive: Receive, pace: float) -> None:
    headers = [(b"content-type", reply.content_type.encode()), *reply.headers]
    if not reply.paced:
        headers.append((b"content-length", str(sum(map(len, reply.chunks))).encode()))
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    if pace <= 0:
        await send({"type": "http.response.body", "body": b"".join(reply.chunks)})
        return
    async with anyio.create_task_group() as tasks:
        # Stop pacing out frames as soon as the client goes away.
        tasks.start_soon(_cancel_on_disconnect, receive, tasks.cancel_scope)
        for n, chunk in enumerate(reply.chunks):
            if n:
                await anyio.sleep(pace)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        tasks.cancel_scope.cancel()


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


# -- running it ----------------------------------------------------------------------------


def _uvicorn(feature: str = "the mock provider") -> Any:
    try:
        import uvicorn
    except ImportError as exc:
        raise missing_extra(feature, "demo", exc) from exc
    return uvicorn


def require_uvicorn(feature: str) -> None:
    """Raise a :class:`MissingExtraError` that names ``feature`` unless uvicorn (the
    ``demo`` extra) is installed: a command checks before it starts."""
    _uvicorn(feature)


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family)
    # Accepted connections inherit it: without it, paced frames leave in Nagle bursts.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def base_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def make_server(app: Any, *, grace: float = 1) -> Any:
    """A uvicorn ``Server`` for an ASGI ``app``: quiet, no lifespan, stopped within
    ``grace`` seconds."""
    uvicorn = _uvicorn()
    config = uvicorn.Config(
        app,
        lifespan="off",
        log_config=None,
        log_level="warning",
        access_log=False,
        ws="none",
        timeout_graceful_shutdown=grace,
    )
    return uvicorn.Server(config)


@contextmanager
def serving(server: Any, sock: socket.socket, name: str, what: str) -> Iterator[None]:
    """Run a uvicorn ``server`` on ``sock`` in a daemon thread called ``name`` for the
    block, once it has started (``what`` names it if it cannot); stop it, and close the
    socket, on exit."""
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=name, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError(f"{what} failed to start")
            thread.join(0.005)
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()


@contextmanager
def mock_server(
    directory: str | Path | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    pace: float = 0.0,
    log: Callable[[str], None] | None = None,
    as_format: str | None = None,
) -> Iterator[str]:
    """Run the mock provider in a thread; yields its base URL, stops it on exit.

    ``port=0`` (the default) takes a free port. ``directory`` defaults to the demo
    streams bundled with laminate. ``as_format`` (a stream target name) re-encodes every
    recording as that API's answer (``laminate serve --as``).
    """
    server = make_server(MockProvider(directory, pace=pace, log=log, as_format=as_format))
    sock = listen(host, port)
    with serving(server, sock, "laminate-mock-provider", "the mock provider"):
        yield base_url(sock)
