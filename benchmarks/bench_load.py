"""laminate under load: many concurrent streams through a real HTTP server on loopback.

Usage: ``python benchmarks/bench_load.py [--quick] [--trio] [--body-kib N]``
(``--help`` for every option)

A uvicorn server (``tests/loopback.py``) runs in its own process and serves a mix of
generated provider answers (see ``_streams.py``): for each of OpenAI Chat Completions,
Anthropic Messages, Ollama and the OpenAI Responses API, one text answer of about
``--body-kib`` KiB in token-sized deltas and one turn of three parallel tool calls with
about as much argument text. At 1, 10, 100 and 1000 concurrent streams (``c`` workers,
each opening the next stream as soon as its last one ends), the client reads them with
httpx and reports, per case:

- ``laminate``: each response fed through ``laminate.normalize_stream``, every event
  consumed, and the final response checked against what the generator put in;
- ``raw httpx``: the same bodies read with ``aiter_bytes`` and dropped: the floor that
  HTTP, the server and the event loop set, which laminate cannot beat.

Columns: streams per second and body megabytes per second (wall clock, the client and
the server each on their own core), and the peak memory per stream in flight on the
client (tracemalloc peak of a separate pass with exactly ``c`` streams open at once,
divided by ``c``; tracing slows the work, so it is never timed).

Last, a hostile case without the server: one answer of ``--tiny-frames`` frames of one
character each (a million by default) fed to ``StreamNormalizer`` in 64 KiB chunks,
with its time, frames per second and peak memory.
"""

from __future__ import annotations

import argparse
import functools
import gc
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio
import httpx
from _streams import BenchStream, network_chunks, text_stream, text_stream_from_deltas
from _streams import tools_stream as tool_calls_stream

import laminate
from laminate._core import jsonlib

ROOT: Final = Path(__file__).resolve().parent.parent
LEVELS: Final = (1, 10, 100, 1000)
PER_CLIENT: Final = 10  # connections per httpx client: its pool scans them all per request


@dataclass(frozen=True)
class Case:
    name: str
    url: str
    stream: BenchStream


@dataclass(frozen=True)
class Result:
    streams_per_s: float
    mb_per_s: float
    peak_kib_per_stream: float


Reader = Callable[[httpx.AsyncClient, Case], Awaitable[int]]


# -- the two readers --------------------------------------------------------------------


async def read_with_laminate(client: httpx.AsyncClient, case: Case) -> int:
    async with (
        client.stream("POST", case.url, json={"stream": True}) as response,
        laminate.normalize_stream(response) as stream,
    ):
        async for _ in stream:
            pass
    final = stream.response
    expected = case.stream
    if final is None or final.text() != expected.text:
        raise RuntimeError(f"{case.name}: wrong text")
    if [t.name for t in final.tool_uses()] != [c.name for c in expected.calls]:
        raise RuntimeError(f"{case.name}: wrong tool calls")
    return len(expected.body)


async def read_raw(client: httpx.AsyncClient, case: Case) -> int:
    size = 0
    async with client.stream("POST", case.url, json={"stream": True}) as response:
        async for chunk in response.aiter_bytes():
            size += len(chunk)
    if size != len(case.stream.body):
        raise RuntimeError(f"{case.name}: {size} bytes read, {len(case.stream.body)} served")
    return size


READERS: Final[dict[str, Reader]] = {"laminate": read_with_laminate, "raw httpx": read_raw}


# -- running c streams at a time ---------------------------------------------------------


async def run_level(
    reader: Reader, cases: Sequence[Case], concurrency: int, total: int, *, trace: bool = False
) -> tuple[int, int]:
    """``total`` streams, ``concurrency`` at a time; return the body bytes read and, when
    ``trace``, the tracemalloc peak over the streams (the clients excluded)."""
    done = 0
    taken = 0
    clients_needed = math.ceil(concurrency / PER_CLIENT)
    limits = httpx.Limits(max_connections=PER_CLIENT, max_keepalive_connections=PER_CLIENT)
    ssl_context = httpx.create_ssl_context()  # built once: each client would load it again

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal done, taken
        while taken < total:
            case = cases[taken % len(cases)]
            taken += 1
            size = await reader(client, case)
            done += size

    async with AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(limits=limits, timeout=120, verify=ssl_context)
            )
            for _ in range(clients_needed)
        ]
        if trace:
            gc.collect()
            tracemalloc.start()
            tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        try:
            async with anyio.create_task_group() as tg:
                for k in range(concurrency):
                    tg.start_soon(worker, clients[k % clients_needed])
            _, peak = tracemalloc.get_traced_memory()
        finally:
            if trace:
                tracemalloc.stop()
    return done, peak - base


def measure(
    reader: Reader, cases: Sequence[Case], concurrency: int, total: int, backend: str
) -> Result:
    gc.collect()
    started = time.perf_counter()
    size, _ = anyio.run(run_level, reader, cases, concurrency, total, backend=backend)
    elapsed = time.perf_counter() - started
    # Memory: exactly `concurrency` streams, all open at once, traced (and not timed).
    _, peak = anyio.run(
        functools.partial(run_level, trace=True),
        reader,
        cases,
        concurrency,
        concurrency,
        backend=backend,
    )
    return Result(total / elapsed, size / elapsed / 1e6, peak / concurrency / 1024)


def warm_up(cases: Sequence[Case], backends: Sequence[str]) -> None:
    """Every reader over every body once: imports, first connections, caches."""
    for backend in backends:
        for reader in READERS.values():
            anyio.run(run_level, reader, cases, len(cases), len(cases), backend=backend)


# -- the server --------------------------------------------------------------------------


class Server:
    """``tests/loopback.py`` in a subprocess, serving a directory of bodies."""

    def __init__(self, directory: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "loopback.py"), str(directory)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http://"):
            self.close()
            raise RuntimeError("the loopback server did not start")

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)


# The mix of the first load table, kept so that its figures compare from run to run (the
# loopback server speaks SSE and NDJSON only; bench_core.py covers every format).
LOAD_PROVIDERS: Final = ("openai", "anthropic", "ollama", "openai-responses")


def build_cases(directory: Path, body_kib: int) -> list[tuple[str, str, BenchStream]]:
    """Write the mixed bodies into ``directory``; return (name, file, stream) for each."""
    out = []
    target = body_kib * 1024
    for provider in LOAD_PROVIDERS:
        # Tool-argument fragments cost a whole frame each: size the arguments so that
        # the turn's body is about as long as the text answer's.
        probe = tool_calls_stream(provider, 3000)
        tools = tool_calls_stream(provider, max(30, 3000 * target // len(probe.body)))
        for kind, stream in (("text", text_stream(provider, target)), ("tools", tools)):
            suffix = ".ndjson" if stream.framing == "ndjson" else ".sse"
            file = f"{provider}-{kind}{suffix}"
            (directory / file).write_bytes(stream.body)
            out.append((f"{provider} {kind}", file, stream))
    return out


# -- a million tiny frames ---------------------------------------------------------------


def tiny_frames(count: int) -> tuple[float, int, int]:
    """Feed one answer of ``count`` one-character deltas; return (seconds, peak, bytes)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    deltas = [letters[i % 26] for i in range(count)]
    stream = text_stream_from_deltas("openai", deltas)
    chunks = network_chunks(stream.body, 65536)

    def run() -> laminate.NormalizedResponse | None:
        normalizer = laminate.StreamNormalizer()
        for chunk in chunks:
            normalizer.feed(chunk)  # events dropped, as a streaming consumer does
        normalizer.close()
        return normalizer.response

    gc.collect()
    started = time.perf_counter()
    response = run()
    elapsed = time.perf_counter() - started
    if response is None or response.text() != stream.text:
        raise RuntimeError("tiny frames: wrong text")
    gc.collect()
    tracemalloc.start()
    try:
        run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return elapsed, peak, len(stream.body)


# -- main --------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: few streams, small")
    parser.add_argument("--body-kib", type=int, default=32, help="size of each text answer (32)")
    parser.add_argument("--streams", type=int, default=2000, help="streams per level at most")
    parser.add_argument("--trio", action="store_true", help="also run every level on trio")
    parser.add_argument("--tiny-frames", type=int, default=1_000_000, help="frames (1000000)")
    parser.add_argument("--levels", type=int, nargs="+", default=list(LEVELS))
    args = parser.parse_args(argv)
    if args.quick:
        args.body_kib, args.tiny_frames = 4, 50_000
        args.levels = [level for level in args.levels if level <= 100]
    backends = ["asyncio", "trio"] if args.trio else ["asyncio"]

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="laminate-bench-") as tmp:
        built = build_cases(Path(tmp), args.body_kib)
        server = Server(Path(tmp))
        try:
            cases = [Case(name, f"{server.url}/body/{file}", s) for name, file, s in built]
            mean_kib = sum(len(c.stream.body) for c in cases) / len(cases) / 1024
            warm_up(cases, backends)
            for backend in backends:
                for level in args.levels:
                    # Enough streams for a steady state: at least 3 per worker (one wave
                    # in a smoke run).
                    total = max(3 * level, min(args.streams, 30 * level), len(cases))
                    if args.quick:
                        total = max(level, len(cases))
                    results = {}
                    for mode, reader in READERS.items():
                        log(f"{backend} c={level} {mode}: {total} streams ...")
                        results[mode] = measure(reader, cases, level, total, backend)
                    rows.append(_row(backend, level, total, results))
        finally:
            server.close()
    tiny = tiny_frames(args.tiny_frames)
    _print(args, mean_kib, len(cases), rows, tiny)


def _row(backend: str, level: int, total: int, results: dict[str, Result]) -> str:
    lam, raw = results["laminate"], results["raw httpx"]
    return (
        f"| {backend} | {level} | {total} | {lam.streams_per_s:,.0f} | {lam.mb_per_s:.1f} "
        f"| {lam.peak_kib_per_stream:,.0f} | {raw.streams_per_s:,.0f} | {raw.mb_per_s:.1f} "
        f"| {raw.peak_kib_per_stream:,.0f} | {lam.streams_per_s / raw.streams_per_s:.2f} |"
    )


def _print(
    args: argparse.Namespace,
    mean_kib: float,
    bodies: int,
    rows: list[str],
    tiny: tuple[float, int, int],
) -> None:
    cpus = os.cpu_count()
    print(
        f"Python {platform.python_version()}, {platform.machine()}, {cpus} CPUs; "
        f"httpx {httpx.__version__}, JSON: {jsonlib.BACKEND}, "
        "server: uvicorn (h11) in its own process on 127.0.0.1; "
        f"{bodies} bodies (4 providers x text / 3 tool calls), {mean_kib:.1f} KiB on average."
    )
    print()
    print(
        "| loop | concurrent | streams | laminate streams/s | MB/s | peak KiB/stream "
        "| raw httpx streams/s | MB/s | peak KiB/stream | laminate / raw |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for row in rows:
        print(row)
    seconds, peak, size = tiny
    print()
    print(
        f"{args.tiny_frames:,} one-character frames ({size / 1e6:.0f} MB, StreamNormalizer, "
        f"64 KiB chunks): {seconds:.2f} s, {args.tiny_frames / seconds:,.0f} frames/s, "
        f"{size / seconds / 1e6:.0f} MB/s, peak {peak / 2**20:.1f} MiB "
        f"({peak / args.tiny_frames:.1f} bytes per frame)."
    )


if __name__ == "__main__":
    main()
