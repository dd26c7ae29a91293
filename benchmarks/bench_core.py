"""Time laminate's StreamNormalizer against a json.loads floor and the official SDKs.

Usage: ``python benchmarks/bench_core.py [--quick] [--repeat N] [--no-sdk] [--provider P]``
(``--help`` for every option)

For each provider it generates (see ``_streams.py``) a ~2 MB text answer in token-sized
deltas and a turn with three parallel tool calls carrying ~300 KB of arguments in
~5-character fragments, cuts each body into network-sized chunks (16 KiB) and reports:

- the floor, measured in the same run: split the body into frames and ``json.loads`` each
  payload, nothing else (SSE: split on blank lines, LF or CRLF as the stream has them,
  strip ``data: ``, skip ``[DONE]``; NDJSON: split lines; AWS event stream: walk the
  binary messages by their lengths and take each payload);
- ``StreamNormalizer`` fed the chunks, every event consumed, ``close()`` called, once with
  the standard library's JSON and once with orjson (the ``fast`` extra, when installed),
  both against the same floor: time, MB/s, microseconds per event, the ratio to the
  floor, and its peak memory (tracemalloc, in a separate run so tracing does not distort
  the timing);
- when installed (``python -m pip install -e ".[bench]"``), the official SDKs' own stream
  helpers fed the same chunks exactly as their clients feed them: the SDK's ``Stream``
  (its SSE decoder, JSON parsing and model construction) under the OpenAI SDK's
  ``ChatCompletionStream`` (``ChatCompletionStreamState.handle_chunk``) or the Anthropic
  SDK's ``MessageStream`` (``accumulate_event``), then the final completion / message.

Times are CPU time (``time.process_time``; ``--clock wall`` for ``perf_counter``), the
best of ``--repeat`` runs (7; ``--sdk-repeat``, 3, for the much slower SDKs). The floor
and laminate (each backend) alternate, and laminate's ratio to the floor is the median of
the rounds' ratios, so a noisy moment hits both sides of each ratio. CPU time keeps other work on a
small machine from counting against whichever case it interrupted; the work is
single-threaded, so on a quiet machine both clocks agree. The garbage collector stays
enabled while timing, as in an application (``--no-gc`` disables it).

For Ollama and Gemini, which send each tool call whole, a third stream holds three calls
of hundreds of KB of arguments each (``--whole-chars``, 900,000 characters in all).
``--paths`` also times, in the same rounds, laminate with its batches on but the handlers'
``run`` off, and frame by frame (no batches); ``--plain`` runs everything frame by frame.

Last, the same text is fed in frames ten times smaller, to show how peak memory depends
on the content and on the number of frames.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib
import json
import os
import platform
import random
import statistics
import struct
import sys
import time
import tracemalloc
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from _streams import (
    PROVIDERS,
    WHOLE_CALLS,
    BenchStream,
    fine_deltas,
    network_chunks,
    text_stream,
    text_stream_from_deltas,
    tools_stream,
    whole_calls_stream,
)

import laminate
from laminate import StreamNormalizer
from laminate._core import jsonlib
from laminate._framing import eventstream

TARGET: Final = 1.5  # laminate's time may be at most this many floors
# ... and with orjson, at most this many (stdlib) floors: 0.7 on every stream, and 1.0 for
# Bedrock's binary stream (whose CRCs and headers the floor does not check).
FAST_TARGET: Final = 0.7
FAST_TARGET_BINARY: Final = 1.0


def fast_target(stream: BenchStream) -> float:
    """The orjson target of a stream."""
    return FAST_TARGET_BINARY if stream.framing == "eventstream" else FAST_TARGET


Runner = Callable[[], int]


# -- the floor --------------------------------------------------------------------------------


# Each payload is decoded, then parsed: on CPython that is faster than json.loads(bytes),
# whose encoding sniffing costs about a microsecond per frame, so the floor is the lower.


def floor_sse(body: bytes, separator: bytes = b"\n\n") -> int:
    """Split into events, take the ``data:`` payload, ``json.loads`` it; nothing else."""
    n = 0
    loads = json.loads
    for frame in body.split(separator):
        at = frame.find(b"data: ")
        if at < 0:
            continue
        payload = frame[at + 6 :]
        if payload != b"[DONE]":
            loads(payload.decode())
            n += 1
    return n


def floor_ndjson(body: bytes) -> int:
    """Split into lines and ``json.loads`` each; nothing else."""
    n = 0
    loads = json.loads
    for line in body.split(b"\n"):
        if line:
            loads(line.decode())
            n += 1
    return n


_PRELUDE: Final = struct.Struct(">II")  # total length, headers length (then the prelude CRC)


def floor_eventstream(body: bytes) -> int:
    """Walk the binary messages by their lengths, ``json.loads`` each payload; nothing else
    (no CRC checks, no headers read)."""
    n = 0
    loads = json.loads
    unpack = _PRELUDE.unpack_from
    pos, end = 0, len(body)
    while pos < end:
        total, headers = unpack(body, pos)
        loads(body[pos + 12 + headers : pos + total - 4].decode())
        pos += total
        n += 1
    return n


def floor_of(stream: BenchStream) -> Runner:
    """The floor for the stream's framing."""
    body = stream.body
    match stream.framing:
        case "sse":
            return lambda: floor_sse(body)
        case "sse-crlf":
            return lambda: floor_sse(body, b"\r\n\r\n")
        case "ndjson":
            return lambda: floor_ndjson(body)
        case "eventstream":
            return lambda: floor_eventstream(body)


# -- laminate ---------------------------------------------------------------------------------


def laminate_run(stream: BenchStream, chunks: Sequence[bytes]) -> int:
    """Feed every chunk, consume every event, close: the number of events."""
    normalizer = StreamNormalizer(provider=stream.provider)
    n = 0
    for chunk in chunks:
        for _event in normalizer.feed(chunk):
            n += 1
    for _event in normalizer.close():
        n += 1
    return n


PATHS: Final = ("fast", "batch", "plain")
"""How laminate reads: ``fast`` as shipped; ``batch``: runs of frames parsed together,
but each handed to the handler's ``on_frame`` (no ``run``); ``plain``: frame by frame,
no batches at all (the path a live stream read a token at a time takes)."""

_MAY_BATCH: Final = StreamNormalizer._may_batch


def _no_batch(self: StreamNormalizer) -> bool:
    return False


def use_path(path: str, provider: str) -> None:
    """Read the next streams of ``provider`` by ``path`` (one of :data:`PATHS`)."""
    StreamNormalizer._may_batch = _MAY_BATCH if path != "plain" else _no_batch  # type: ignore[method-assign]
    handler = type(StreamNormalizer(provider=provider)._handler)
    runs = _RUNS.setdefault(handler, handler.__dict__.get("run"))
    if runs is None:
        return
    # A handler whose `run` is None reads a batch's frames one by one (the normalizer
    # asks for the method with getattr).
    setattr(handler, "run", runs if path == "fast" else None)  # noqa: B010


_RUNS: dict[type, Any] = {}


def laminate_with(
    backend: str, stream: BenchStream, chunks: Sequence[bytes], path: str = "fast"
) -> Runner:
    """``laminate_run`` with this JSON backend in use (the normalizer binds it on start),
    reading by ``path``."""

    def run() -> int:
        jsonlib.use(backend)
        use_path(path, stream.provider)
        try:
            return laminate_run(stream, chunks)
        finally:
            use_path("fast", stream.provider)

    return run


def laminate_check(stream: BenchStream, chunks: Sequence[bytes]) -> None:
    """The timed work must also be right (with each backend): the text and every call's
    arguments."""
    for backend in jsonlib.available():
        jsonlib.use(backend)
        _check_once(stream, chunks)
    jsonlib.use("stdlib")


def _check_once(stream: BenchStream, chunks: Sequence[bytes]) -> None:
    normalizer = StreamNormalizer(provider=stream.provider)
    for chunk in chunks:
        normalizer.feed(chunk)
    normalizer.close()
    response = normalizer.response
    if response is None:
        raise SystemExit(f"{stream.name}: laminate gave no response")
    if response.text() != stream.text:
        raise SystemExit(f"{stream.name}: laminate's text differs from the generated text")
    got = [(u.name, u.input.value) for u in response.tool_uses()]
    want = [(c.name, json.loads(c.arguments)) for c in stream.calls]
    if got != want:
        raise SystemExit(f"{stream.name}: laminate's tool calls differ from the generated ones")


def laminate_unavailable(provider: str) -> str | None:
    """Why laminate cannot normalize this provider yet, or ``None``."""
    try:
        StreamNormalizer(provider=provider)
    except (ValueError, laminate.LaminateError) as exc:
        return str(exc)
    return None


# -- the official SDKs (optional; typed loosely, they may be absent) --------------------------


def _sdk_httpx(streaming: Any) -> Any:
    """The HTTP library the SDK's streams read from (``httpx2`` in new releases)."""
    return getattr(streaming, "httpx2", None) or streaming.httpx


def _response(httpx: Any, chunks: Sequence[bytes], url: str) -> Any:
    """A streaming response over the chunks, as the SDK's transport would hand it over."""
    return httpx.Response(
        200,
        headers={"content-type": "text/event-stream"},
        content=iter(chunks),
        request=httpx.Request("POST", url),
    )


class OpenAISDK:
    name = "OpenAI SDK"
    provider = "openai"

    def __init__(self) -> None:
        self.module: Any = importlib.import_module("openai")
        streaming: Any = importlib.import_module("openai._streaming")
        chat: Any = importlib.import_module("openai.lib.streaming.chat")
        types: Any = importlib.import_module("openai.types.chat")
        self.version: str = self.module.__version__
        self._httpx = _sdk_httpx(streaming)
        self._stream_cls = streaming.Stream
        self._chat_stream = chat.ChatCompletionStream
        self._chunk = types.ChatCompletionChunk
        self._omit = getattr(self.module, "omit", None) or self.module.NOT_GIVEN
        self._client = self.module.OpenAI(api_key="bench", base_url="http://bench.invalid/v1")

    def run(self, chunks: Sequence[bytes]) -> Any:
        """What ``client.chat.completions.stream(...)`` does with the bytes it receives."""
        response = _response(self._httpx, chunks, "http://bench.invalid/v1/chat/completions")
        raw = self._stream_cls(cast_to=self._chunk, response=response, client=self._client)
        stream = self._chat_stream(
            raw_stream=raw, response_format=self._omit, input_tools=self._omit
        )
        n = 0
        for _event in stream:
            n += 1
        return n, stream.get_final_completion()

    def check(self, stream: BenchStream, result: Any) -> None:
        message = result.choices[0].message
        calls = [(c.function.name, c.function.arguments) for c in message.tool_calls or []]
        if (message.content or "") != stream.text or calls != [
            (c.name, c.arguments) for c in stream.calls
        ]:
            raise SystemExit(f"{stream.name}: the OpenAI SDK's result differs")


class AnthropicSDK:
    name = "Anthropic SDK"
    provider = "anthropic"

    def __init__(self) -> None:
        self.module: Any = importlib.import_module("anthropic")
        streaming: Any = importlib.import_module("anthropic._streaming")
        messages: Any = importlib.import_module("anthropic.lib.streaming._messages")
        types: Any = importlib.import_module("anthropic.types")
        self.version: str = self.module.__version__
        self._httpx = _sdk_httpx(streaming)
        self._stream_cls = streaming.Stream
        self._message_stream = messages.MessageStream
        self._event = types.RawMessageStreamEvent
        self._not_given = self.module.NOT_GIVEN
        self._client = self.module.Anthropic(api_key="bench", base_url="http://bench.invalid")

    def run(self, chunks: Sequence[bytes]) -> Any:
        """What ``client.messages.stream(...)`` does with the bytes it receives."""
        response = _response(self._httpx, chunks, "http://bench.invalid/v1/messages")
        raw = self._stream_cls(cast_to=self._event, response=response, client=self._client)
        try:
            stream = self._message_stream(raw, output_format=self._not_given)
        except TypeError:  # releases before structured outputs take the raw stream only
            stream = self._message_stream(raw)
        n = 0
        for _event in stream:
            n += 1
        return n, stream.get_final_message()

    def check(self, stream: BenchStream, result: Any) -> None:
        text = "".join(b.text for b in result.content if b.type == "text")
        calls = [(b.name, b.input) for b in result.content if b.type == "tool_use"]
        if text != stream.text or calls != [
            (c.name, json.loads(c.arguments)) for c in stream.calls
        ]:
            raise SystemExit(f"{stream.name}: the Anthropic SDK's result differs")


SDK = OpenAISDK | AnthropicSDK
SDK_PROVIDERS: Final = {cls.provider: cls.name for cls in (OpenAISDK, AnthropicSDK)}


def load_sdks() -> tuple[dict[str, SDK], list[str]]:
    sdks: dict[str, SDK] = {}
    notes: list[str] = []
    for cls in (OpenAISDK, AnthropicSDK):
        try:
            sdk = cls()
        except ImportError:
            notes.append(f"{cls.name}: not installed (python -m pip install -e '.[bench]')")
            continue
        except Exception as exc:  # an SDK release whose internals moved
            notes.append(f"{cls.name}: cannot be driven ({type(exc).__name__}: {exc})")
            continue
        sdks[sdk.provider] = sdk
        notes.append(f"{sdk.name} {sdk.version}")
    return sdks, notes


def sdk_runner(sdk: SDK, stream: BenchStream, chunks: Sequence[bytes]) -> Runner:
    _, result = sdk.run(chunks)
    sdk.check(stream, result)

    def run() -> int:
        count: int = sdk.run(chunks)[0]
        return count

    return run


# -- measuring --------------------------------------------------------------------------------


CLOCKS: Final[dict[str, Callable[[], float]]] = {
    "cpu": time.process_time,
    "wall": time.perf_counter,
}


def run_times(
    cases: dict[str, Runner], repeat: int, *, no_gc: bool, clock: Callable[[], float]
) -> dict[str, list[float]]:
    """Every run's time of each case, in interleaved rounds."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeat):
        for name, fn in cases.items():
            gc.collect()
            if no_gc:
                gc.disable()
            try:
                t0 = clock()
                fn()
                times[name].append(clock() - t0)
            finally:
                gc.enable()
    return times


def peak_memory(fn: Runner) -> int:
    """Peak bytes allocated while ``fn`` runs (its inputs were allocated before)."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@dataclass
class Row:
    stream: BenchStream
    events: int
    floor: float  # best time
    laminate: float  # best time, the standard library's JSON
    ratio: float  # laminate / floor: the median of the rounds' ratios
    fast: float | None = None  # best time with orjson
    fast_ratio: float | None = None  # with orjson / floor: the median of the rounds' ratios
    peak: int = 0
    sdk: str = ""
    sdk_time: float | None = None
    paths: dict[str, float] = field(default_factory=dict)  # every case's ratio to the floor


def measure(
    stream: BenchStream, args: argparse.Namespace, sdks: dict[str, SDK], log: Callable[[str], None]
) -> Row:
    chunks = network_chunks(stream.body, args.chunk)
    paths = list(PATHS) if args.paths else [args.path]
    for path in paths:
        use_path(path, stream.provider)
        laminate_check(stream, chunks)
    use_path("fast", stream.provider)
    fast = "orjson" in jsonlib.available() and not args.no_orjson
    backends = ("stdlib", "orjson") if fast else ("stdlib",)
    cases: dict[str, Runner] = {"floor": floor_of(stream)}
    for path in paths:
        for backend in backends:
            cases[f"{path}, {backend}"] = laminate_with(backend, stream, chunks, path)
    clock = CLOCKS[args.clock]
    events = laminate_run(stream, chunks)
    log(f"  {stream.name}: {len(stream.body):,} bytes, {stream.frames:,} frames, timing...")
    # The floor and laminate alternate, so each round's two runs see the machine alike:
    # the median of the rounds' ratios resists a neighbour's load better than the best
    # times do, which a busy moment can shift for one case and not the other.
    times = run_times(cases, args.repeat, no_gc=args.no_gc, clock=clock)
    jsonlib.use("stdlib")

    def ratio(case: str) -> float:
        pairs = zip(times["floor"], times[case], strict=True)
        return statistics.median(lam / flo for flo, lam in pairs)

    main = f"{args.path}, stdlib"
    row = Row(stream, events, min(times["floor"]), min(times[main]), ratio(main))
    if fast:
        main = f"{args.path}, orjson"
        row.fast, row.fast_ratio = min(times[main]), ratio(main)
    row.paths = {case: ratio(case) for case in cases if case != "floor"}
    row.peak = peak_memory(lambda: laminate_run(stream, chunks))
    sdk = sdks.get(stream.provider)
    if sdk is not None and not args.no_sdk:
        runner = {"sdk": sdk_runner(sdk, stream, chunks)}
        row.sdk = sdk.name
        row.sdk_time = min(run_times(runner, args.sdk_repeat, no_gc=args.no_gc, clock=clock)["sdk"])
    elif stream.provider in SDK_PROVIDERS:
        row.sdk = f"{SDK_PROVIDERS[stream.provider]}: " + ("skipped" if args.no_sdk else "absent")
    return row


def memory_scaling(provider: str, chars: int) -> tuple[int, int, int, int]:
    """Peak memory for the same text in ~45-character and ~4.5-character deltas."""
    fine = fine_deltas(random.Random(7), max(chars // 4, 10))
    coarse = ["".join(fine[i : i + 10]) for i in range(0, len(fine), 10)]
    peaks = []
    for deltas in (coarse, fine):
        stream = text_stream_from_deltas(provider, deltas)
        chunks = network_chunks(stream.body, 16384)
        laminate_check(stream, chunks)
        peaks.append(peak_memory(functools.partial(laminate_run, stream, chunks)))
    return len(coarse), len(fine), peaks[0], peaks[1]


# -- report -----------------------------------------------------------------------------------


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} KB"


def _mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def _chars(stream: BenchStream) -> str:
    """The content: characters of text and of tool arguments."""
    n = len(stream.text) + sum(len(c.arguments) for c in stream.calls)
    return f"{n / 1e3:.0f} K chars"


def table(rows: Sequence[Row]) -> list[str]:
    out = [
        "| stream | body | content | frames | events | floor | laminate | x floor | MB/s"
        " | µs/event | laminate, orjson | x floor | peak memory | official SDK | SDK x floor"
        " | laminate speedup |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        s = r.stream
        mark = "" if round(r.ratio, 2) <= TARGET else " ✗"  # as printed
        fast = fast_ratio = "—"
        if r.fast is not None and r.fast_ratio is not None:
            fast = f"{r.fast * 1e3:,.0f} ms"
            fast_mark = "" if round(r.fast_ratio, 2) <= fast_target(s) else " ✗"
            fast_ratio = f"**{r.fast_ratio:.2f}x**{fast_mark}"
        sdk = r.sdk or "—"
        sdk_ratio = speedup = "—"
        if r.sdk_time is not None:
            sdk = f"{r.sdk}: {r.sdk_time * 1e3:,.0f} ms"
            sdk_ratio = f"{r.sdk_time / r.floor:.1f}x"
            speedup = f"**{r.sdk_time / r.laminate:.1f}x**"
        out.append(
            f"| {s.name} | {_mb(len(s.body))} | {_chars(s)} | {s.frames:,} | {r.events:,}"
            f" | {r.floor * 1e3:,.0f} ms | {r.laminate * 1e3:,.0f} ms | **{r.ratio:.2f}x**{mark}"
            f" | {len(s.body) / r.laminate / 1e6:.1f} | {r.laminate / r.events * 1e6:.2f}"
            f" | {fast} | {fast_ratio} | {_mib(r.peak)} | {sdk} | {sdk_ratio} | {speedup} |"
        )
    return out


def paths_table(rows: Sequence[Row]) -> list[str]:
    """Each way of reading against the floor, and what the batches and the handlers'
    ``run`` save (1 - the batch path's ratio over the plain path's, and so on)."""
    backends = ["stdlib"] + (["orjson"] if any(r.fast is not None for r in rows) else [])
    head, rule = "| stream |", "|---|"
    for backend in backends:
        head += "".join(f" {path}, {backend} |" for path in PATHS)
        head += f" batches save, {backend} | run saves, {backend} |"
        rule += "--:|" * (len(PATHS) + 2)
    out = [head, rule]
    for r in rows:
        line = f"| {r.stream.name} |"
        for backend in backends:
            got = {path: r.paths.get(f"{path}, {backend}") for path in PATHS}
            line += "".join(f" {v:.2f}x |" if v is not None else " — |" for v in got.values())
            for slow, quick in ((got["plain"], got["batch"]), (got["batch"], got["fast"])):
                saved = "—" if slow is None or quick is None else f"{1 - quick / slow:+.0%}"
                line += f" {saved} |"
        out.append(line)
    return out


def memory_table(results: Sequence[tuple[str, int, int, int, int]], chars: int) -> list[str]:
    out = [
        f"| {chars // 1000} K characters of text | frames | peak memory"
        " | same text, 10x the frames | peak memory | ratio | bytes per extra frame |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for provider, n_coarse, n_fine, p_coarse, p_fine in results:
        per_frame = (p_fine - p_coarse) / (n_fine - n_coarse)
        out.append(
            f"| {provider} | {n_coarse:,} | {_mib(p_coarse)} | {n_fine:,} | {_mib(p_fine)}"
            f" | {p_fine / p_coarse:.2f}x | {per_frame:.0f} |"
        )
    return out


def machine() -> str:
    fast = "orjson " + _version("orjson") if "orjson" in jsonlib.available() else "no orjson"
    # isal (the `fast` extra) or zlib; zlib's in code from before the choice was made
    crc = getattr(eventstream, "crc32", zlib.crc32).__module__.partition(".")[0]
    return (
        f"Python {platform.python_version()} ({platform.python_implementation()}),"
        f" {platform.system()} {platform.machine()}, {os.cpu_count()} cores,"
        f" laminate {laminate.__version__}, {fast}, CRC-32 from {crc}"
        + (f" {_version('isal')}" if crc == "isal" else "")
    )


def _version(name: str) -> str:
    module: Any = importlib.import_module(name)
    return str(module.__version__)


def load() -> str:
    """The 1-minute load average: other work on the machine makes the times noisier."""
    return f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "n/a"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small streams, one run (smoke)")
    parser.add_argument("--repeat", type=int, default=7, help="best of N runs (7)")
    parser.add_argument("--sdk-repeat", type=int, default=3, help="best of N for the SDKs (3)")
    parser.add_argument("--chunk", type=int, default=16384, help="network read size (16384)")
    parser.add_argument("--text-bytes", type=int, default=2_000_000, help="text body size")
    parser.add_argument("--tool-chars", type=int, default=300_000, help="tool argument size")
    parser.add_argument(
        "--whole-chars", type=int, default=900_000, help="whole-object tool arguments size"
    )
    parser.add_argument("--memory-chars", type=int, default=100_000, help="memory test text")
    parser.add_argument("--no-gc", action="store_true", help="disable gc while timing")
    parser.add_argument(
        "--clock", choices=CLOCKS, default="cpu", help="cpu: process time (default); wall"
    )
    parser.add_argument("--no-sdk", action="store_true", help="skip the official SDKs")
    parser.add_argument("--no-orjson", action="store_true", help="skip the orjson column")
    parser.add_argument("--provider", action="append", choices=PROVIDERS, help="only these")
    parser.add_argument(
        "--plain",
        dest="path",
        action="store_const",
        const="plain",
        default="fast",
        help="read frame by frame: batches (and the handlers' run) off",
    )
    parser.add_argument(
        "--paths",
        action="store_true",
        help="also time the other ways of reading (batches without run; plain), same rounds",
    )
    parser.add_argument(
        "--streams",
        default="text,tools,whole",
        help="which streams: text, tools, whole (large whole-object arguments; Ollama, Gemini)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat, args.sdk_repeat = 1, 1
        args.text_bytes, args.tool_chars, args.memory_chars = 200_000, 30_000, 10_000
        args.whole_chars = 90_000

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    sdks, sdk_notes = ({}, ["official SDKs: skipped (--no-sdk)"]) if args.no_sdk else load_sdks()
    load_before = load()
    notes: list[str] = []
    rows: list[Row] = []
    scaling: list[tuple[str, int, int, int, int]] = []
    for provider in args.provider or PROVIDERS:
        missing = laminate_unavailable(provider)
        if missing is not None:
            notes.append(f"{provider}: skipped, laminate does not support it yet ({missing})")
            log(notes[-1])
            continue
        log(f"{provider}: generating streams...")
        kinds = args.streams.split(",")
        streams = [text_stream(provider, args.text_bytes)] if "text" in kinds else []
        if "tools" in kinds:
            streams.append(tools_stream(provider, args.tool_chars))
        if "whole" in kinds and provider in WHOLE_CALLS:
            streams.append(whole_calls_stream(provider, args.whole_chars))
        rows.extend(measure(stream, args, sdks, log) for stream in streams)
        scaling.append((provider, *memory_scaling(provider, args.memory_chars)))

    command = "python benchmarks/bench_core.py" + "".join(f" {a}" for a in (argv or sys.argv[1:]))
    gc_note = "gc disabled while timing" if args.no_gc else "gc enabled while timing"
    clock_note = "CPU time (process_time)" if args.clock == "cpu" else "wall time (perf_counter)"
    print(f"`{command}`\n")
    print(f"{machine()}; {', '.join(sdk_notes)}.")
    print(
        f"Feeds of {args.chunk:,} bytes; {clock_note}, best of {args.repeat}"
        + (f" (SDKs: best of {args.sdk_repeat})" if args.sdk_repeat != args.repeat else "")
        + f"; {gc_note}; peak memory from a separate tracemalloc run;"
        f" load average {load_before} before, {load()} after.\n"
    )
    print("\n".join(table(rows)))
    print(
        "\nfloor: split the body into frames and json.loads each payload, nothing else."
        " laminate: with the standard library's JSON; laminate, orjson: with the fast"
        " extra, against the same floor. floor, laminate, SDK: best times. x floor: the"
        " median over the rounds of laminate's time over the floor's, measured back to back."
        f" Targets: laminate at most {TARGET}x the floor; with orjson {FAST_TARGET}x"
        f" and {FAST_TARGET_BINARY}x for Bedrock"
        " (✗ marks a miss)."
        " SDK x floor and the speedup: from the best times."
    )
    if args.paths:
        print(
            "\nEach way of reading against the floor (x floor, the median of the rounds):"
            " fast, as shipped; batch, runs of frames parsed together but each handed to"
            " the handler's on_frame; plain, frame by frame. batches save: 1 - batch/plain;"
            " run saves: 1 - fast/batch.\n"
        )
        print("\n".join(paths_table(rows)))
    print("\nPeak memory against the number of frames (laminate; the same text, 10x the frames):\n")
    print("\n".join(memory_table(scaling, args.memory_chars)))
    for note in notes:
        print(f"\n- {note}")


if __name__ == "__main__":
    main()
