"""laminate against a real HTTP server on loopback (uvicorn, see ``loopback.py``): many
concurrent streams, events released as soon as their frame is complete, dropped and
stalled connections, and the connection closed on every way out of the loop.

Nothing here measures time: the server and the test hand-shake through gates and
events, and a stall is only ever ended by the code under test.
"""

from __future__ import annotations

import gc
import os
import tracemalloc
from collections.abc import Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio
import httpx
import pytest

import laminate
from laminate import (
    Event,
    IncompleteStreamError,
    InvalidToolUse,
    LaminateError,
    NormalizedResponse,
    NormalizedStream,
    StreamNormalizer,
    StreamReadError,
    StreamTimeoutError,
)

from .loopback import (
    HANDSHAKE_TIMEOUT,
    Drop,
    Gate,
    LoopbackServer,
    Pause,
    Plan,
    Send,
    Stall,
    Step,
    wait_for,
)
from .support import FIXTURES, stream_fixtures

# Like httpx (see pyproject.toml), httpcore nests async generators without aclosing();
# when a response is closed before its body ends, trio reports the inner ones it
# finalizes. laminate closes the response itself, which closes the connection.
pytestmark = pytest.mark.filterwarnings("ignore:Async generator .httpcore\\.:ResourceWarning")

LOAD_STREAMS: Final = 500
LOAD_CLIENTS: Final = 50
# A generous ceiling on resident memory per stream in flight: a few kilobytes of laminate
# state, plus the client's and (same process) the server's connection objects.
MAX_BYTES_PER_STREAM: Final = 256 * 1024
# What one normalizer may hold beyond (a small multiple of) the bytes it was fed.
MAX_STATE_BYTES: Final = 8 * 1024

TEXT_FIXTURES: Final = (
    "openai/text.sse",
    "anthropic/text.sse",
    "ollama/text.ndjson",
    "openai-responses/text.sse",
)
TOOL_FIXTURES: Final = (
    "openai/tool-call.sse",
    "anthropic/tool-call.sse",
    "ollama/parallel-tool-calls.ndjson",
    "openai-responses/function-call.sse",
)


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def _content_type(name: str) -> str:
    return "application/x-ndjson" if name.endswith(".ndjson") else "text/event-stream"


def _frames(body: bytes) -> list[bytes]:
    """The body cut after each frame (SSE: blank line; NDJSON: line end)."""
    sep = b"\n\n" if b"\n\n" in body else b"\n"
    pieces = body.split(sep)
    frames = [piece + sep for piece in pieces[:-1]]
    if pieces[-1]:
        frames.append(pieces[-1])
    return frames


@dataclass(frozen=True)
class Outcome:
    """A stream's end: the final response, or the error's type and ``.partial``."""

    response: NormalizedResponse | None
    error: str | None

    @classmethod
    def of_error(cls, error: LaminateError) -> Outcome:
        return cls(error.partial, type(error).__name__)


def _in_process(body: bytes, content_type: str) -> Outcome:
    try:
        return Outcome(laminate.collect_sync([body], content_type=content_type), None)
    except LaminateError as exc:
        return Outcome.of_error(exc)


async def _over_http(
    client: httpx.AsyncClient, url: str, idle_timeout: float | None = None
) -> Outcome:
    """The outcome of a stream, except that a read error (timeouts included) is raised."""
    async with client.stream("POST", url, json={"stream": True}) as response:
        try:
            return Outcome(await laminate.collect(response, idle_timeout=idle_timeout), None)
        except StreamReadError:
            raise
        except LaminateError as exc:
            return Outcome.of_error(exc)


def _snapshot_after(data: bytes) -> NormalizedResponse:
    """What a normalizer holds after these bytes (the ``.partial`` of a failure here)."""
    normalizer = StreamNormalizer()
    normalizer.feed(data)
    return normalizer.snapshot()


# -- load -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadCase:
    url: str
    expected: Outcome
    marker: str  # the model name, made unique to this stream


def _load_cases(server: LoopbackServer, first_halves: Gate) -> list[LoadCase]:
    """500 streams over every fixture, each made unique by its model name.

    Each sends the first half of its body, then waits at one gate shared by all, so
    every stream is open and half-read at the same time.
    """
    fixtures = stream_fixtures()
    cases = []
    for i in range(LOAD_STREAMS):
        fixture = fixtures[i % len(fixtures)]
        content_type = _content_type(fixture.path.name)
        body = fixture.path.read_bytes()
        model = _model_of(_in_process(body, content_type))
        marker = f"{model}~{i}" if model and model.encode() in body else ""
        if marker:
            body = body.replace(model.encode(), marker.encode())
        expected = _in_process(body, content_type)
        if marker:
            assert _model_of(expected) == marker  # the marker reaches the response
        half = len(body) // 2
        plan = Plan([Send(body[:half]), Pause(first_halves), Send(body[half:])], content_type)
        cases.append(LoadCase(server.add_plan(plan), expected, marker))
    return cases


def _model_of(outcome: Outcome) -> str:
    return outcome.response.model if outcome.response is not None else ""


def _resident_bytes() -> int | None:
    """The process's resident set size now (Linux), or ``None`` where unknown."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


def _live(kind: type) -> int:
    return sum(isinstance(obj, kind) for obj in gc.get_objects())


@pytest.mark.anyio
async def test_500_concurrent_streams_no_cross_talk_bounded_memory(
    server: LoopbackServer,
) -> None:
    first_halves = Gate()
    cases = _load_cases(server, first_halves)
    outcomes: list[Outcome | None] = [None] * len(cases)
    opened = 0
    all_open = anyio.Event()

    async def one(client: httpx.AsyncClient, i: int) -> None:
        nonlocal opened
        async with client.stream("POST", cases[i].url, json={"stream": True}) as response:
            opened += 1
            if opened == len(cases):
                all_open.set()
            try:
                outcomes[i] = Outcome(await laminate.collect(response), None)
            except LaminateError as exc:
                outcomes[i] = Outcome.of_error(exc)

    # Several clients: httpcore's pool scans every connection per request, so one pool
    # of 500 costs more than the streams. One TLS context, built once, serves them all.
    ssl_context = httpx.create_ssl_context()
    limits = httpx.Limits(max_connections=LOAD_STREAMS // LOAD_CLIENTS)
    gc.collect()
    rss_before = _resident_bytes()
    with anyio.fail_after(HANDSHAKE_TIMEOUT * 3):
        async with AsyncExitStack() as stack:
            clients = [
                await stack.enter_async_context(
                    httpx.AsyncClient(limits=limits, timeout=HANDSHAKE_TIMEOUT, verify=ssl_context)
                )
                for _ in range(LOAD_CLIENTS)
            ]
            async with anyio.create_task_group() as tg:
                for i in range(len(cases)):
                    tg.start_soon(one, clients[i % LOAD_CLIENTS], i)
                await all_open.wait()
                # Every stream is open, half its body read and held by its normalizer:
                # the most memory this run holds at once. Only now may the rest come.
                rss_in_flight = _resident_bytes()
                first_halves.open()

    for i, (case, outcome) in enumerate(zip(cases, outcomes, strict=True)):
        assert outcome == case.expected, f"stream {i} ({case.url})"
        if case.marker:
            assert outcome is not None
            assert _model_of(outcome) == case.marker
    if rss_before is not None and rss_in_flight is not None:
        per_stream = (rss_in_flight - rss_before) / len(cases)
        assert per_stream < MAX_BYTES_PER_STREAM, f"{per_stream:.0f} bytes per stream in flight"
    # Nothing of a finished stream outlives it but its response.
    gc.collect()
    assert _live(StreamNormalizer) == 0
    assert _live(NormalizedStream) == 0


def test_memory_held_per_stream_in_flight() -> None:
    """The laminate side of the load test, traced exactly: 500 normalizers, each holding
    half a fixture, keep a few kilobytes each (no copy of what they have parsed)."""
    bodies = [f.path.read_bytes() for f in stream_fixtures()]
    halves = [bodies[i % len(bodies)][: len(bodies[i % len(bodies)]) // 2] for i in range(500)]
    gc.collect()
    tracemalloc.start()
    try:
        normalizers = []
        for half in halves:
            normalizer = StreamNormalizer()
            normalizer.feed(half)  # the events are dropped, as a consumer would
            normalizers.append(normalizer)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    fed = sum(map(len, halves))
    assert len(normalizers) == 500
    assert held < 4 * fed + 500 * MAX_STATE_BYTES, f"{held / 500:.0f} bytes per normalizer"


# -- latency ----------------------------------------------------------------------------


def _segments(body: bytes, count: int, *, mid_frame: bool) -> list[bytes]:
    """``count`` pieces of the body: each but the last ends right after a frame with
    events, or (``mid_frame``) halfway through the frame that follows it."""
    frames = _frames(body)
    normalizer = StreamNormalizer()
    cuts: list[int] = []
    end = 0  # where frame i ends
    for i, frame in enumerate(frames[:-1]):
        end += len(frame)
        # A frame already cut into (the one after the previous cut) may be chosen too.
        if normalizer.feed(frame) and len(cuts) < count - 1:
            cuts.append(end + len(frames[i + 1]) // 2 if mid_frame else end)
    assert len(cuts) == count - 1, "the fixture has enough frames with events"
    return [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


def _events_per_segment(segments: list[bytes]) -> list[list[Event]]:
    normalizer = StreamNormalizer()
    out = [normalizer.feed(segment) for segment in segments]
    out[-1] += normalizer.close()
    return out


@pytest.mark.anyio
@pytest.mark.parametrize("mid_frame", [False, True], ids=["pause-between-frames", "mid-frame"])
@pytest.mark.parametrize("name", TEXT_FIXTURES)
async def test_each_event_arrives_before_the_server_sends_more(
    server: LoopbackServer, name: str, mid_frame: bool
) -> None:
    """The server sends a frame (and half the next), then waits at a gate that the test
    opens only once it holds the events of that frame: a laminate that waited for
    more bytes (a fuller read, the next line) would never get them."""
    body = (FIXTURES / name).read_bytes()
    segments = _segments(body, 4, mid_frame=mid_frame)
    expected = _events_per_segment(segments)
    assert all(expected[:-1]), "every segment completes at least one frame with events"
    gates = [Gate() for _ in segments[1:]]
    steps: list[Send | Pause] = [Send(segments[0])]
    for gate, segment in zip(gates, segments[1:], strict=True):
        steps += [Pause(gate), Send(segment)]
    plan = Plan(steps, _content_type(name))
    url = server.add_plan(plan)

    with anyio.fail_after(HANDSHAKE_TIMEOUT):
        async with (
            httpx.AsyncClient() as client,
            client.stream("POST", url, json={"stream": True}) as response,
            laminate.normalize_stream(response) as stream,
        ):
            for k, wanted in enumerate(expected):
                got = [await stream.__anext__() for _ in wanted]
                assert got == wanted, f"segment {k}"
                if k < len(gates):
                    assert not gates[k].is_open  # the rest has not been sent
                    gates[k].open()
            with pytest.raises(StopAsyncIteration):
                await stream.__anext__()
            # Complete at its terminal event: laminate stops reading there, whether or
            # not the server has finished writing what follows it.
            assert stream.response is not None


# -- faults -----------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("name", TOOL_FIXTURES)
async def test_dropped_connection_is_a_read_error_with_partial_and_cause(
    server: LoopbackServer, name: str
) -> None:
    body = (FIXTURES / name).read_bytes()
    sent = body[: len(body) // 2]
    plan = Plan([Send(sent), Drop()], _content_type(name))
    url = server.add_plan(plan)
    async with httpx.AsyncClient() as client:
        response = await client.send(client.build_request("POST", url), stream=True)
        with pytest.raises(StreamReadError) as info:
            await laminate.collect(response)
        assert response.is_closed
    error = info.value
    assert type(error) is StreamReadError
    assert isinstance(error.__cause__, httpx.RemoteProtocolError)
    assert "RemoteProtocolError" in str(error)
    # Everything that arrived is in .partial, exactly as a normalizer fed those bytes.
    assert error.partial == _snapshot_after(sent)
    assert error.partial is not None
    assert error.partial.provider == name.partition("/")[0]


@pytest.mark.anyio
async def test_dropped_inside_tool_arguments_keeps_them_as_invalid_tool_use(
    server: LoopbackServer,
) -> None:
    body = (FIXTURES / "anthropic" / "tool-call.sse").read_bytes()
    sent = body[: body.index(b"lines")]  # inside the call's input_json_delta fragments
    plan = Plan([Send(sent), Drop()])
    async with httpx.AsyncClient() as client, client.stream("POST", server.add_plan(plan)) as resp:
        with pytest.raises(StreamReadError) as info:
            await laminate.collect(resp)
    partial = info.value.partial
    assert partial is not None
    assert partial.tool_uses() == []
    [block] = partial.content
    assert isinstance(block, InvalidToolUse)
    assert block.name == "read_file"
    assert block.raw_input.startswith('{"path": "notes/r')
    assert "unfinished" in block.reason


@pytest.mark.anyio
async def test_stalled_server_and_idle_timeout(server: LoopbackServer) -> None:
    body = (FIXTURES / "openai" / "text.sse").read_bytes()
    sent = b"".join(_frames(body)[:3])
    plan = Plan([Send(sent), Stall()])
    async with httpx.AsyncClient() as client:
        request = client.build_request("POST", server.add_plan(plan))
        response = await client.send(request, stream=True)
        # Everything before the stall is in the socket already: the reads of it return
        # at once, and only the silence after it can reach the timeout.
        await wait_for(plan.stalled, "the server stalled")
        with pytest.raises(StreamTimeoutError) as info:
            await laminate.collect(response, idle_timeout=0.2)
        # The timed-out stream closed its connection: the server saw the client leave.
        await wait_for(plan.disconnected, "the client disconnected")
    assert isinstance(info.value, StreamReadError)  # a timeout is a read failure
    assert isinstance(info.value.__cause__, TimeoutError)
    assert info.value.partial == _snapshot_after(sent)
    assert info.value.partial is not None
    assert info.value.partial.text()


@pytest.mark.anyio
async def test_stalled_server_and_the_clients_own_read_timeout(server: LoopbackServer) -> None:
    """httpx's ``timeout=`` also bounds each read; its ReadTimeout is a transport error
    like any other: a StreamReadError whose cause it is, with what arrived."""
    plan, sent = _stalling_plan("anthropic/tool-call.sse")
    async with httpx.AsyncClient(timeout=0.5) as client:
        request = client.build_request("POST", server.add_plan(plan))
        response = await client.send(request, stream=True)
        await wait_for(plan.stalled, "the server stalled")
        with pytest.raises(StreamTimeoutError) as info:
            await laminate.collect(response)
        await wait_for(plan.disconnected, "the client disconnected")
    assert isinstance(info.value.__cause__, httpx.ReadTimeout)
    assert info.value.partial == _snapshot_after(sent)


def _until_stop_reason(name: str) -> bytes:
    """A fixture's bytes up to and including the frame that says why it stopped."""
    frames = _frames((FIXTURES / name).read_bytes())
    marker = b"stop_reason" if name.startswith("anthropic") else b'finish_reason":"stop'
    cut = max(i for i, frame in enumerate(frames) if marker in frame.replace(b" ", b""))
    return b"".join(frames[: cut + 1])


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["anthropic/text.sse", "openai/text.sse"])
@pytest.mark.parametrize("fault", ["drop", "read timeout", "idle timeout"])
async def test_a_transport_fault_after_the_stop_reason_completes_the_answer(
    server: LoopbackServer, name: str, fault: str
) -> None:
    """Contract §5: after the provider said why it stopped, only the terminal marker was
    missing; a dropped or silent connection then ends a complete answer."""
    sent = _until_stop_reason(name)
    plan = Plan([Send(sent), Drop() if fault == "drop" else Stall()], _content_type(name))
    timeout = 0.5 if fault == "read timeout" else None
    idle = 0.3 if fault == "idle timeout" else None
    async with httpx.AsyncClient(timeout=timeout) as client:
        response = await client.send(
            client.build_request("POST", server.add_plan(plan)), stream=True
        )
        answer = await laminate.collect(response, idle_timeout=idle)
    expected = StreamNormalizer()
    expected.feed(sent)
    expected.close()
    assert answer == expected.response
    assert answer.text()


@pytest.mark.anyio
async def test_server_that_stalls_after_the_terminal_event(server: LoopbackServer) -> None:
    body = (FIXTURES / "anthropic" / "text.sse").read_bytes()
    plan = Plan([Send(body), Stall()])
    async with httpx.AsyncClient() as client:
        request = client.build_request("POST", server.add_plan(plan))
        response = await client.send(request, stream=True)
        await wait_for(plan.stalled, "the server stalled")
        # The bytes after message_stop cannot change the answer (the normalizer ignores
        # them), so there is nothing left to wait for. idle_timeout only keeps this
        # from hanging while the behaviour is wrong.
        final = await laminate.collect(response, idle_timeout=0.3)
        await wait_for(plan.disconnected, "the client disconnected")
    assert final == laminate.collect_sync([body])


@pytest.mark.anyio
async def test_a_body_that_ends_after_an_unterminated_frame(server: LoopbackServer) -> None:
    """The server ends the body cleanly right after a frame's JSON, before its blank
    line and before any finish: iterating must not end as if the answer were whole."""
    frames = _frames((FIXTURES / "openai" / "text.sse").read_bytes())
    sent = b"".join(frames[:3]).rstrip(b"\n")
    plan = Plan([Send(sent)])

    async def consume(response: httpx.Response) -> None:
        async with laminate.normalize_stream(response) as stream:
            async for _ in stream:
                pass

    async with (
        httpx.AsyncClient() as client,
        client.stream("POST", server.add_plan(plan)) as response,
    ):
        with pytest.raises(IncompleteStreamError) as info:
            await consume(response)
    assert info.value.partial is not None
    assert info.value.partial.text() == _snapshot_after(sent + b"\n\n").text()


def _stalling_plan(name: str) -> tuple[Plan, bytes]:
    """A plan that sends the first three frames of a fixture, then stalls; and those bytes."""
    sent = b"".join(_frames((FIXTURES / name).read_bytes())[:3])
    return Plan([Send(sent), Stall()], _content_type(name)), sent


@pytest.mark.anyio
async def test_cancelling_the_consumer_closes_the_connection(server: LoopbackServer) -> None:
    plan, _ = _stalling_plan("openai/text.sse")
    url = server.add_plan(plan)
    got_event = anyio.Event()
    response_box: list[httpx.Response] = []

    async def consume(client: httpx.AsyncClient) -> None:
        response = await client.send(client.build_request("POST", url), stream=True)
        response_box.append(response)
        # No `async with` on purpose: cancellation alone must close the response.
        async for _ in laminate.normalize_stream(response):
            got_event.set()

    async with httpx.AsyncClient() as client:
        with anyio.fail_after(HANDSHAKE_TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(consume, client)
                await got_event.wait()
                tg.cancel_scope.cancel()
        # Still inside the client: only laminate's close can have ended the connection.
        await wait_for(plan.disconnected, "the client disconnected")
        assert response_box[0].is_closed
    assert not plan.completed.is_set()


@pytest.mark.anyio
async def test_break_closes_the_connection(server: LoopbackServer) -> None:
    plan, _ = _stalling_plan("anthropic/text.sse")
    url = server.add_plan(plan)
    async with httpx.AsyncClient() as client:
        response = await client.send(client.build_request("POST", url), stream=True)
        with anyio.fail_after(HANDSHAKE_TIMEOUT):
            async with laminate.normalize_stream(response) as stream:
                async for _ in stream:
                    break
        await wait_for(plan.disconnected, "the client disconnected")
        assert response.is_closed


@pytest.mark.anyio
async def test_exception_in_the_loop_body_closes_the_connection(server: LoopbackServer) -> None:
    plan, _ = _stalling_plan("ollama/text.ndjson")
    url = server.add_plan(plan)

    class ConsumerFailed(Exception):
        pass

    async def consume(response: httpx.Response) -> None:
        async with laminate.normalize_stream(response) as stream:
            async for _ in stream:
                raise ConsumerFailed

    async with httpx.AsyncClient() as client:
        response = await client.send(client.build_request("POST", url), stream=True)
        with anyio.fail_after(HANDSHAKE_TIMEOUT), pytest.raises(ConsumerFailed):
            await consume(response)
        await wait_for(plan.disconnected, "the client disconnected")
        assert response.is_closed


@pytest.mark.anyio
async def test_aclose_mid_stream_closes_the_connection(server: LoopbackServer) -> None:
    plan, sent = _stalling_plan("openai-responses/text.sse")
    url = server.add_plan(plan)
    async with httpx.AsyncClient() as client:
        response = await client.send(client.build_request("POST", url), stream=True)
        stream = laminate.normalize_stream(response)
        with anyio.fail_after(HANDSHAKE_TIMEOUT):
            first = await stream.__anext__()
            await stream.aclose()
            await stream.aclose()  # idempotent
        await wait_for(plan.disconnected, "the client disconnected")
        assert response.is_closed
    assert first == StreamNormalizer().feed(sent)[0]


def test_sync_break_and_drop(server: LoopbackServer) -> None:
    """The sync shell over the same server: break closes, a drop is a read error."""
    plan, _ = _stalling_plan("openai/text.sse")
    with httpx.Client() as client:
        response = client.send(client.build_request("POST", server.add_plan(plan)), stream=True)
        with laminate.normalize_stream_sync(response) as stream:
            for _ in stream:
                break
        assert plan.disconnected.wait(HANDSHAKE_TIMEOUT)
        assert response.is_closed

        body = (FIXTURES / "openai" / "text.sse").read_bytes()
        dropped = Plan([Send(body[:200]), Drop()])
        with (
            client.stream("POST", server.add_plan(dropped)) as response,
            pytest.raises(StreamReadError) as info,
        ):
            laminate.collect_sync(response)
    assert isinstance(info.value.__cause__, httpx.RemoteProtocolError)
    assert info.value.partial == _snapshot_after(body[:200])


@pytest.mark.anyio
async def test_complete_answers_after_faults_on_the_same_client(server: LoopbackServer) -> None:
    """Faults leave the client's pool usable: the next streams complete normally."""
    body = (FIXTURES / "anthropic" / "parallel-tool-calls.sse").read_bytes()
    expected = laminate.collect_sync([body])
    async with httpx.AsyncClient() as client:
        faults: list[list[Step]] = [[Send(body[:100]), Drop()], [Send(body[:100]), Stall()]]
        for steps in faults:
            url = server.add_plan(Plan(steps))
            with pytest.raises(StreamReadError):
                await _over_http(client, url, idle_timeout=0.2)
        for _ in range(3):
            outcome = await _over_http(client, server.add_body(body))
            assert outcome == Outcome(expected, None)
            assert isinstance(outcome.response, NormalizedResponse)
