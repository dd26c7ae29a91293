"""The translating proxy's cost: time to first byte and throughput, through it and direct.

Usage: ``python benchmarks/bench_proxy.py [--quick] [--deltas N] [--streams N] [--workers N]``

Three processes on loopback: a backend (uvicorn, a tiny ASGI app in this file, answering
every request with one prepared stream: a text answer of ``--deltas`` token-sized
deltas, as Anthropic Messages on ``/v1/messages`` and as Chat Completions on
``/v1/chat/completions``), the proxy (``laminate proxy``, one worker unless ``--workers``
says more), and the client here
(httpx, reading every byte). Three ways to the same answer, measured in one run:

- ``direct``: the client asks the backend for its Anthropic stream;
- ``same API``: the client asks the proxy, whose backend speaks Anthropic (the answer
  passes through byte for byte, read alongside for the log);
- ``translated``: the client asks the proxy for Anthropic, whose backend speaks Chat
  Completions (the request translated, the answer normalized and written as Anthropic).

The last column is the CPU time the server the client talks to spent per answer (the
backend for ``direct``, the proxy otherwise), which a busy machine does not distort.

Time to first byte: the median and 90th percentile of ``--requests`` requests one after
the other (from sending the request to the first body byte), the three cases asked in
turn (a request to each per round, the order rotating, so that a noisy moment falls on
every case alike), and what each adds to direct's median. Requests follow each other with
no pause: on this machine a process woken from idle adds about a millisecond per hop.
Throughput: ``--streams`` streams, 32 at a time, in answers per second and body MB per
second of what the client received. The proxy adds its work to the same two cores as the
backend and the client, which is how it runs on a laptop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Final

import httpx

ROOT: Final = Path(__file__).resolve().parent.parent
CONCURRENCY: Final = 32


# -- the backend (run in its own process) ---------------------------------------------------


def _bodies(deltas: int) -> dict[str, bytes]:
    from laminate import StreamEncoder, StreamNormalizer

    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m"}
    pieces: list[dict[str, Any]] = [
        {**head, "choices": [{"index": 0, "delta": {"content": f"word{n % 97} "}}]}
        for n in range(deltas)
    ]
    pieces.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    pieces.append(
        {**head, "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": deltas}}
    )
    chat = b"".join(b"data: " + json.dumps(p).encode() + b"\n\n" for p in pieces)
    chat += b"data: [DONE]\n\n"
    normalizer = StreamNormalizer("openai")
    events = normalizer.feed(chat) + normalizer.close()
    encoder = StreamEncoder("anthropic")
    messages = b"".join(encoder.encode(e) for e in events) + encoder.close()
    return {"/v1/messages": messages, "/v1/chat/completions": chat}


def serve_backend(port: int, deltas: int) -> None:
    import uvicorn

    bodies = _bodies(deltas)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        body = bodies.get(scope["path"], b"")
        status = 200 if body else 404
        headers = [(b"content-type", b"text/event-stream"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        # In pieces of about 64 frames, as a model's server flushes them.
        step = 4096
        for start in range(0, len(body), step):
            more = start + step < len(body)
            await send(
                {
                    "type": "http.response.body",
                    "body": body[start : start + step],
                    "more_body": more,
                }
            )

    uvicorn.run(
        app, host="127.0.0.1", port=port, log_level="warning", access_log=False, lifespan="off"
    )


# -- the client -------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"a server did not start: {process.args!r}")
        try:
            httpx.post(url, json={}, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"a server did not start in time: {process.args!r}")


REQUEST: Final = {
    "model": "m",
    "max_tokens": 4096,
    "stream": True,
    "messages": [{"role": "user", "content": "Say many words."}],
}


async def _one(client: httpx.AsyncClient, url: str) -> tuple[float, int]:
    started = time.perf_counter()
    first = 0.0
    size = 0
    tail = b""
    async with client.stream("POST", url + "/v1/messages", json=REQUEST) as answer:
        if answer.status_code != 200:
            raise SystemExit(f"{url}: HTTP {answer.status_code}: {(await answer.aread())[:200]!r}")
        async for chunk in answer.aiter_raw():
            if not first:
                first = time.perf_counter() - started
            size += len(chunk)
            tail = (tail + chunk)[-64:]
    # Only whole answers count: each ends with Anthropic's terminal event.
    if b"message_stop" not in tail:
        raise SystemExit(f"{url}: an answer ended before its message_stop: {tail!r}")
    return first, size


async def _ttfb(urls: list[str], requests: int) -> list[list[float]]:
    """Each URL's times to first byte, asked in turn (a request to each per round, the
    order rotating), so that a noisy moment of the machine falls on every case alike."""
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(httpx.AsyncClient(timeout=60)) for _ in urls]
        for client, url in zip(clients, urls, strict=True):
            await _one(client, url)  # a warm connection, as a client keeps
        times: list[list[float]] = [[] for _ in urls]
        for round_ in range(requests):
            for k in range(len(urls)):
                at = (round_ + k) % len(urls)
                times[at].append((await _one(clients[at], urls[at]))[0])
        return times


async def _throughput(url: str, streams: int) -> tuple[float, float]:
    limits = httpx.Limits(max_connections=CONCURRENCY)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        left = list(range(streams))
        total = 0

        async def worker() -> None:
            nonlocal total
            while left:
                left.pop()
                _, size = await _one(client, url)
                total += size

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        elapsed = time.perf_counter() - started
    return streams / elapsed, total / elapsed / 1e6


def _cpu_seconds(pid: int) -> float:
    """The user and system CPU time a process and its children (the workers of
    ``--workers``) have used so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    children = [
        int(child)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]
    return own + sum(_cpu_seconds(child) for child in children)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests (a smoke run)")
    parser.add_argument("--deltas", type=int, default=2000, help="text deltas per answer (2000)")
    parser.add_argument("--requests", type=int, default=300, help="requests for the TTFB (300)")
    parser.add_argument("--streams", type=int, default=600, help="streams for throughput (600)")
    parser.add_argument("--workers", type=int, default=1, help="proxy worker processes (1)")
    parser.add_argument("--serve-backend", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_backend:
        serve_backend(args.serve_backend, args.deltas)
        return 0
    if args.quick:
        args.requests, args.streams = 30, 64
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    backend_port, same_port, translated_port = _free_port(), _free_port(), _free_port()
    backend = f"http://127.0.0.1:{backend_port}"
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--serve-backend",
                str(backend_port),
                "--deltas",
                str(args.deltas),
            ],
            env=env,
        ),
        *(
            subprocess.Popen(
                [
                    *(sys.executable, "-m", "laminate", "proxy", "--backend", spec),
                    *("--port", str(port), "--workers", str(args.workers)),
                ],
                env=env,
                stderr=subprocess.DEVNULL,
            )
            for spec, port in (
                (f"anthropic:{backend}", same_port),
                (f"openai:{backend}/v1", translated_port),
            )
        ),
    ]
    try:
        cases = {
            "direct": backend,
            "same API": f"http://127.0.0.1:{same_port}",
            "translated": f"http://127.0.0.1:{translated_port}",
        }
        for url, process in zip(cases.values(), processes, strict=True):
            _wait(url + "/v1/messages", process)
        print(
            f"python {platform.python_version()}, {os.cpu_count()} cores, "
            f"{args.deltas} deltas per answer, {args.workers} proxy worker(s)"
        )
        print(
            f"{'':<12}{'TTFB median':>13}{'added':>11}{'TTFB p90':>11}{'answers/s':>11}{'MB/s':>8}"
            f"{'server CPU/answer':>19}"
        )
        ttfbs = asyncio.run(_ttfb(list(cases.values()), args.requests))
        direct = statistics.median(ttfbs[0]) * 1e3
        for (name, url), process, times in zip(cases.items(), processes, ttfbs, strict=True):
            times.sort()
            median = statistics.median(times) * 1e3
            p90 = times[int(len(times) * 0.9)] * 1e3
            before = _cpu_seconds(process.pid)
            per_second, mb = asyncio.run(_throughput(url, args.streams))
            cpu = (_cpu_seconds(process.pid) - before) / args.streams * 1e3
            print(
                f"{name:<12}{median:>10.2f} ms{median - direct:>+8.2f} ms{p90:>8.2f} ms"
                f"{per_second:>11.1f}{mb:>8.1f}{cpu:>16.1f} ms"
            )
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
