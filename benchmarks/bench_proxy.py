"""The translating proxy's cost: time to first byte and throughput, through it and direct.

Usage: ``python benchmarks/bench_proxy.py [--quick] [--deltas N] [--rounds N] [--profile]
[--base SRC] [--pipe] [--asgi] [--length] [--rotate]``

Processes on loopback: a backend (uvicorn, a tiny ASGI app in this file, answering every
request with one prepared stream: a text answer of ``--deltas`` token-sized deltas, as
Anthropic Messages on ``/v1/messages`` and as Chat Completions on
``/v1/chat/completions``, written 4 KiB at a time in chunked encoding, as a server
streaming a model's tokens sends it: it cannot know the length before the last token;
``--length`` sends a ``Content-Length`` instead, as a server that holds the whole
answer before its first byte), two proxies (``laminate proxy``, one worker unless
``--workers`` says more: one whose backend speaks Anthropic, one whose backend speaks Chat
Completions), and the client here (httpx, reading every byte). Six ways to an answer,
measured in one run:

- ``direct M`` / ``direct C``: the client asks the backend for its Messages (Chat) stream;
- ``same M`` / ``same C``: the client asks the proxy whose backend speaks its API (the
  answer passes through byte for byte, read alongside for the log);
- ``M->C``: a Messages client, the proxy's backend speaks Chat Completions (the request
  translated, the answer normalized and written as Messages); ``C->M`` the other way.

Each proxied case is held against the direct case of its client's API: the same answer,
in the same bytes or the same API.

- **Concurrency 1**: ``--rounds`` requests to each proxied case one after the other, each
  after a request to its direct case (the proxy's requests alternating with direct ones,
  as the targets were first measured), in runs of ten such pairs, the cases taking turns
  run by run, so that a noisy moment falls on every case alike. The time to first byte
  (sending the request to the first body byte) and the time of the whole answer;
  throughput is answers per second of one stream (the median time of an answer).
  ``--rotate`` asks every case in turn instead (a request to each per round): each proxy
  then sits idle while the others' cases run, and is woken cold, which on a small
  virtual machine costs more than the proxy's own work (the raw relay of ``--pipe``
  shows how much).
- **Concurrency 16**: ``--blocks`` blocks, each case in turn, of 48 streams 16 at a time:
  the 50th and 99th percentile of their times to first byte, and answers per second (each
  case's ratio to its direct case taken per block, and the median of the blocks' ratios
  kept, so a noisy moment distorts one block's pair, not the figure).

The last columns are the CPU time the server the client talks to spent per answer (the
backend for direct, the proxy otherwise), which a busy machine does not distort. The
table of targets follows: what each proxied case adds to its direct case's median time to
first byte, its share of direct throughput (at concurrency 1 and 16), its p99 time to first
byte at concurrency 16 against direct's.

``--pipe`` adds a raw TCP relay in front of the backend (``pipe M`` / ``pipe C``: its
bytes copied both ways in asyncio protocols, nothing parsed), held against the same
targets as a same-API proxy but not counted: the least any process between the client
and the backend costs on the machine at hand. ``--asgi`` adds a bare ASGI forwarder
(``asgi M`` / ``asgi C``: uvicorn run as the proxy runs it, an app that posts the body to
the backend through the proxy's own transport and sends the chunks on, nothing else),
held against the same targets, not counted either: the least any ASGI app on uvicorn
costs, what the proxy's own work comes on top of.

``--base SRC`` runs a second pair of proxies from another checkout's ``src`` (``git
archive HEAD src | tar -x -C /tmp/base``), asked in the same rounds: before and after in
one run. ``--profile`` runs the proxies under cProfile and prints where their time went,
by package and by function.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import pstats
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx

ROOT: Final = Path(__file__).resolve().parent.parent
CONCURRENCY: Final = 16
_PAIRS: Final = 10  # pairs of requests (direct, then through the proxy) in a run
BLOCK: Final = 48  # streams per case in one block at concurrency 16

# The targets, one worker: what a case may add to direct's median time to first byte (ms),
# the share of direct throughput it keeps, and its p99 time to first byte at concurrency
# 16 against direct's.
_FLOORS: Final = frozenset({"pipe", "asgi"})  # the cases without targets of their own
TARGETS: Final = {
    "same": (0.5, 0.8, 2.0),
    "translated": (1.0, 0.65, 2.0),
}


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


def serve_backend(port: int, deltas: int, *, length: bool = False) -> None:
    """The backend: each answer streamed in chunked encoding, as a server streaming a
    model's tokens sends it (it cannot know the length before the last token); with
    ``length``, with a ``Content-Length`` instead, as a server that holds the whole
    answer before its first byte."""
    import uvicorn

    bodies = _bodies(deltas)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        body = bodies.get(scope["path"], b"")
        status = 200 if body else 404
        headers = [(b"content-type", b"text/event-stream")]
        if length:
            headers.append((b"content-length", b"%d" % len(body)))
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


def serve_pipe(port: int, backend_port: int) -> None:
    """A raw TCP relay (``--pipe``): each connection's bytes copied to a connection to
    the backend and back as they arrive, in asyncio protocols, with nothing parsed: the
    least a process between client and backend costs, the floor under any proxy's
    figures on this machine."""

    class Side(asyncio.Protocol):
        def __init__(self) -> None:
            self.transport: asyncio.Transport | None = None
            self.peer: Side | None = None
            self.held: list[bytes] = []

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.transport = transport  # type: ignore[assignment]

        def data_received(self, data: bytes) -> None:
            peer = self.peer
            if peer is None or peer.transport is None:
                self.held.append(data)
            else:
                peer.transport.write(data)

        def connection_lost(self, exc: Exception | None) -> None:
            if self.peer is not None and self.peer.transport is not None:
                self.peer.transport.close()

    class Client(Side):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            asyncio.get_running_loop().create_task(self.connect())

        async def connect(self) -> None:
            loop = asyncio.get_running_loop()
            _, backend = await loop.create_connection(Side, "127.0.0.1", backend_port)
            backend.peer, self.peer = self, backend
            for data in self.held:
                backend.transport.write(data)  # type: ignore[union-attr]
            self.held.clear()

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(Client, "127.0.0.1", port)
        await server.serve_forever()

    asyncio.run(main())


def serve_asgi(port: int, backend_port: int) -> None:
    """A bare ASGI forwarder (``--asgi``): uvicorn as the proxy runs it (one worker, its
    listening socket's ``TCP_NODELAY``), an app that reads the request's body, posts it
    to the backend's same path through the proxy's own transport, and sends the answer's
    chunks on as they come, nothing else (no key, no routing, no log, no usage): the
    least an ASGI app on uvicorn costs on this machine, under the proxy's own figures."""
    import socket as sockets

    import uvicorn
    from starlette.requests import Request

    from laminate._proxy.transport import Http1Pool

    backend = httpx.URL(f"http://127.0.0.1:{backend_port}")
    pools: list[Http1Pool] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if not pools:
            pools.append(Http1Pool(connect=5.0, write=5.0))
        body = await Request(scope, receive).body()
        url = backend.copy_with(raw_path=scope["raw_path"])
        answer = await pools[0].post(url, [("content-type", "application/json")], body)
        kind = answer.headers.get("content-type", "text/event-stream").encode()
        await send(
            {
                "type": "http.response.start",
                "status": answer.status_code,
                "headers": [(b"content-type", kind)],
            }
        )
        async for chunk in answer.stream:  # type: ignore[union-attr]
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    sock = sockets.create_server(("127.0.0.1", port), backlog=2048)
    sock.setsockopt(sockets.IPPROTO_TCP, sockets.TCP_NODELAY, 1)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


def serve_profiled(out: str, argv: list[str]) -> None:
    """The proxy (``laminate proxy`` with ``argv``) under cProfile, its stats written to
    ``out`` when it stops (on SIGTERM: uvicorn drains, then the proxy exits with
    ``SystemExit``)."""
    import cProfile

    from laminate._cli.main import main as cli

    profile = cProfile.Profile()
    profile.enable()
    try:
        cli(["proxy", *argv])
    finally:
        profile.disable()
        profile.dump_stats(out)


# -- the client -------------------------------------------------------------------------------


MESSAGES: Final = {
    "model": "m",
    "max_tokens": 4096,
    "stream": True,
    "messages": [{"role": "user", "content": "Say many words."}],
}
CHAT: Final = {
    "model": "m",
    "max_tokens": 4096,
    "stream": True,
    "stream_options": {"include_usage": True},
    "messages": [{"role": "user", "content": "Say many words."}],
}
# Each client API: its path, its request, and the bytes its stream ends with.
CLIENTS: Final = {
    "M": ("/v1/messages", json.dumps(MESSAGES).encode(), b"message_stop"),
    "C": ("/v1/chat/completions", json.dumps(CHAT).encode(), b"[DONE]"),
}


@dataclass
class Case:
    name: str
    url: str
    client: str  # "M" or "C"
    kind: str  # "direct", "same", "translated", or a floor: "pipe" or "asgi"
    process: subprocess.Popen[bytes]
    ttfb: list[float] = field(default_factory=list)  # concurrency 1, seconds
    whole: list[float] = field(default_factory=list)  # concurrency 1, the whole answer
    ttfb16: list[float] = field(default_factory=list)
    rates16: list[float] = field(default_factory=list)  # answers/s, per block
    cpu: float = 0.0  # server CPU seconds over the concurrency-16 blocks
    streams16: int = 0


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


async def _one(client: httpx.AsyncClient, case: Case) -> tuple[float, float, int]:
    """One answer: its time to first byte, its whole time, its size."""
    path, body, end = CLIENTS[case.client]
    headers = {"content-type": "application/json"}
    started = time.perf_counter()
    first = 0.0
    size = 0
    tail = b""
    async with client.stream("POST", case.url + path, content=body, headers=headers) as answer:
        if answer.status_code != 200:
            raise SystemExit(
                f"{case.name}: HTTP {answer.status_code}: {(await answer.aread())[:200]!r}"
            )
        async for chunk in answer.aiter_raw():
            if not first:
                first = time.perf_counter() - started
            size += len(chunk)
            tail = (tail + chunk)[-64:]
    whole = time.perf_counter() - started
    # Only whole answers count: each ends with its API's terminal event.
    if end not in tail:
        raise SystemExit(f"{case.name}: an answer ended before its {end.decode()}: {tail!r}")
    return first, whole, size


async def _sequential(cases: list[Case], rounds: int, *, rotate: bool) -> None:
    """Concurrency 1: each proxied case in runs of pairs (its direct case, then it), the
    cases taking turns run by run; or, ``rotate``, a request to each case per round,
    the order rotating."""
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(httpx.AsyncClient(timeout=60)) for _ in cases]
        for client, case in zip(clients, cases, strict=True):
            await _one(client, case)  # a warm connection, as a client keeps
        if rotate:
            order = [
                [(round_ + k) % len(cases) for k in range(len(cases))] for round_ in range(rounds)
            ]
        else:
            direct = {c.client: n for n, c in enumerate(cases) if c.kind == "direct"}
            proxied = [n for n, c in enumerate(cases) if c.kind != "direct"]
            order = [
                [direct[cases[at].client], at] * _PAIRS
                for run in range(max(1, rounds // _PAIRS))
                for at in proxied[run % len(proxied) :] + proxied[: run % len(proxied)]
            ]
        for asked in order:
            for at in asked:
                first, whole, _ = await _one(clients[at], cases[at])
                cases[at].ttfb.append(first)
                cases[at].whole.append(whole)


async def _block(case: Case, streams: int) -> None:
    """Concurrency 16: ``streams`` answers, 16 at a time."""
    limits = httpx.Limits(max_connections=CONCURRENCY)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        await asyncio.gather(*(_one(client, case) for _ in range(CONCURRENCY)))  # warm
        left = list(range(streams))

        async def worker() -> None:
            while left:
                left.pop()
                first, _, _ = await _one(client, case)
                case.ttfb16.append(first)

        before = _cpu_seconds(case.process.pid)
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        elapsed = time.perf_counter() - started
        case.cpu += _cpu_seconds(case.process.pid) - before
        case.streams16 += streams
    case.rates16.append(streams / elapsed)


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


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def _report(cases: list[Case], args: argparse.Namespace) -> bool:
    direct = {c.client: c for c in cases if c.kind == "direct"}
    print(
        f"\n{'':<16}{'c1 TTFB p50':>12}{'added':>9}{'c1 p99':>9}{'c1 ans/s':>10}"
        f"{'c16 p50':>9}{'c16 p99':>9}{'c16 ans/s':>11}{'CPU/ans':>9}"
    )
    for case in cases:
        base = direct[case.client]
        p50 = statistics.median(case.ttfb) * 1e3
        added = p50 - statistics.median(base.ttfb) * 1e3
        print(
            f"{case.name:<16}{p50:>9.2f} ms{added:>+9.2f}{_pct(case.ttfb, 0.99) * 1e3:>9.2f}"
            f"{1 / statistics.median(case.whole):>10.1f}"
            f"{statistics.median(case.ttfb16) * 1e3:>9.2f}{_pct(case.ttfb16, 0.99) * 1e3:>9.2f}"
            f"{statistics.median(case.rates16):>11.1f}"
            f"{case.cpu / max(case.streams16, 1) * 1e3:>6.2f} ms"
        )
    print(
        f"\nTargets (one worker; ratios against the direct case of the client's API, "
        f"interleaved in one run):\n{'case':<16}{'target':<34}{'measured':>12}  result"
    )
    passed = True
    for case in cases:
        if case.kind == "direct":
            continue
        base = direct[case.client]
        # The floors have no target: held against the same-API ones, for scale.
        floor = case.kind in _FLOORS
        ttfb_max, share_min, p99_max = TARGETS["same" if floor else case.kind]
        added = (statistics.median(case.ttfb) - statistics.median(base.ttfb)) * 1e3
        share1 = statistics.median(base.whole) / statistics.median(case.whole)
        share16 = statistics.median(
            mine / theirs for mine, theirs in zip(case.rates16, base.rates16, strict=True)
        )
        p99 = _pct(case.ttfb16, 0.99) / _pct(base.ttfb16, 0.99)
        for target, measured, ok in (
            (f"c1 TTFB p50 added <= +{ttfb_max} ms", f"{added:+.2f} ms", added <= ttfb_max),
            (f"c1 throughput >= {share_min} of direct", f"{share1:.2f}", share1 >= share_min),
            (f"c16 throughput >= {share_min} of direct", f"{share16:.2f}", share16 >= share_min),
            (f"c16 TTFB p99 <= {p99_max}x direct's", f"{p99:.2f}x", p99 <= p99_max),
        ):
            if floor:
                where = "within" if ok else "over"
                print(f"{case.name:<16}{target:<34}{measured:>12}  (floor: {where})")
                continue
            passed &= ok
            print(f"{case.name:<16}{target:<34}{measured:>12}  {'pass' if ok else 'FAIL'}")
    return passed


# What the profile's functions are grouped by: the first prefix of a file's path that
# matches, else "other".
_GROUPS: Final = (
    ("httpcore/h11/httpx", ("httpcore", "h11", "httpx")),
    ("laminate proxy", ("laminate/_proxy",)),
    ("laminate reading", ("laminate/_framing", "laminate/_apis", "laminate/_normalizer")),
    ("laminate writing", ("laminate/_encode",)),
    ("laminate other", ("laminate",)),
    ("uvicorn/httptools", ("uvicorn", "httptools")),
    ("starlette", ("starlette",)),
    ("anyio", ("anyio", "sniffio")),
    ("asyncio/uvloop", ("asyncio", "uvloop")),
    ("json", ("json", "orjson")),
)


def _group(filename: str) -> str:
    path = filename.replace("\\", "/")
    for name, parts in _GROUPS:
        if any(f"/{part}/" in path or f"/{part}." in path for part in parts):
            return name
    if filename.startswith("<") or filename == "~":
        return "builtins"
    return "other"


def _profile_summary(path: str, title: str, answers: int) -> None:
    stats = pstats.Stats(path)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    # The event loop's own C code (uvloop's, or asyncio's select) is counted as the own
    # time of the call that runs it: mostly waiting for the sockets, so left out.
    idle = sum(
        entry[2]
        for (filename, _, name), entry in raw.items()
        if name == "run" and filename.endswith("runners.py")
    )
    total = sum(entry[2] for entry in raw.values()) - idle or 1e-9
    groups: dict[str, float] = defaultdict(float)
    for (filename, _, name), entry in raw.items():
        if not (name == "run" and filename.endswith("runners.py")):
            groups[_group(filename)] += entry[2]
    print(
        f"\nProfile of the proxy {title}: {total:.2f} s of own time over {answers} answers "
        f"(the event loop's own time, {idle:.2f} s, mostly waiting, left out)"
    )
    for name, seconds in sorted(groups.items(), key=lambda item: -item[1]):
        print(f"  {name:<22}{seconds / total:>6.1%}{seconds / answers * 1e6:>10.0f} µs/answer")
    print("  the functions with the most own time:")
    top = sorted(
        (item for item in raw.items() if not item[0][0].endswith("runners.py")),
        key=lambda item: -item[1][2],
    )[:20]
    for (filename, line, name), entry in top:
        where = "/".join(Path(filename).parts[-2:]) if filename != "~" else ""
        print(f"  {entry[2] / total:>6.1%} {entry[1]:>9} calls  {name} ({where}:{line})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests (a smoke run)")
    parser.add_argument("--deltas", type=int, default=2000, help="text deltas per answer (2000)")
    parser.add_argument(
        "--rounds", type=int, default=200, help="requests per case at concurrency 1 (200)"
    )
    parser.add_argument(
        "--blocks", type=int, default=6, help="blocks of 48 streams per case at concurrency 16"
    )
    parser.add_argument("--workers", type=int, default=1, help="proxy worker processes (1)")
    parser.add_argument("--profile", action="store_true", help="profile the proxies (cProfile)")
    parser.add_argument("--base", metavar="SRC", help="also run the proxies from this src")
    parser.add_argument(
        "--pipe", action="store_true", help="also a raw TCP relay to the backend (the floor)"
    )
    parser.add_argument(
        "--asgi",
        action="store_true",
        help="also a bare ASGI forwarder on uvicorn (the floor of any ASGI proxy)",
    )
    parser.add_argument(
        "--length",
        action="store_true",
        help="the backend sends a Content-Length, not chunked encoding",
    )
    parser.add_argument(
        "--rotate", action="store_true", help="concurrency 1: every case in turn, not in pairs"
    )
    parser.add_argument("--serve-backend", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--serve-pipe", metavar="PORT,BACKEND", help=argparse.SUPPRESS)
    parser.add_argument("--serve-asgi", metavar="PORT,BACKEND", help=argparse.SUPPRESS)
    parser.add_argument("--serve-profiled", metavar="OUT", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args(argv)
    if args.serve_backend:
        serve_backend(args.serve_backend, args.deltas, length=args.length)
        return 0
    if args.serve_pipe:
        port, backend_port = map(int, args.serve_pipe.split(","))
        serve_pipe(port, backend_port)
        return 0
    if args.serve_asgi:
        port, backend_port = map(int, args.serve_asgi.split(","))
        serve_asgi(port, backend_port)
        return 0
    if args.serve_profiled:
        serve_profiled(args.serve_profiled, rest)
        return 0
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.quick:
        args.rounds, args.blocks = 30, 2
    backend_port = _free_port()
    backend = f"http://127.0.0.1:{backend_port}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    backend_process = subprocess.Popen(
        [
            *(sys.executable, __file__, "--serve-backend", str(backend_port)),
            *("--deltas", str(args.deltas)),
            *(("--length",) if args.length else ()),
        ],
        env=env,
    )
    processes = [backend_process]
    profiles: list[tuple[str, str, list[Case]]] = []
    cases = [
        Case("direct M", backend, "M", "direct", backend_process),
        Case("direct C", backend, "C", "direct", backend_process),
    ]
    for floor, asked in (("pipe", args.pipe), ("asgi", args.asgi)):
        if not asked:
            continue
        port = _free_port()
        command = [sys.executable, __file__, f"--serve-{floor}", f"{port},{backend_port}"]
        process = subprocess.Popen(command, env=env)
        processes.append(process)
        url = f"http://127.0.0.1:{port}"
        cases += [Case(f"{floor} {api}", url, api, floor, process) for api in ("M", "C")]
    scratch = tempfile.mkdtemp(prefix="bench-proxy-")
    sources = [("", ROOT / "src")]
    if args.base:
        sources.insert(0, (" (base)", Path(args.base).resolve()))
    for label, src in sources:
        for spec, own in ((f"anthropic:{backend}", "M"), (f"openai:{backend}/v1", "C")):
            port = _free_port()
            proxy_args = ["--backend", spec, "--port", str(port), "--workers", str(args.workers)]
            if args.profile:
                out = os.path.join(scratch, f"{len(profiles)}.prof")
                command = [sys.executable, __file__, "--serve-profiled", out, *proxy_args]
            else:
                command = [sys.executable, "-m", "laminate", "proxy", *proxy_args]
            process = subprocess.Popen(
                command, env={**os.environ, "PYTHONPATH": str(src)}, stderr=subprocess.DEVNULL
            )
            processes.append(process)
            url = f"http://127.0.0.1:{port}"
            other = "C" if own == "M" else "M"
            mine = [
                Case(f"same {own}{label}", url, own, "same", process),
                Case(f"{other}->{own}{label}", url, other, "translated", process),
            ]
            cases += mine
            if args.profile:
                backend_name = "Messages" if own == "M" else "Chat Completions"
                profiles.append((out, f"with a {backend_name} backend{label}", mine))
    try:
        _wait(backend + "/v1/messages", backend_process)
        for process in processes[1:]:
            case = next(c for c in cases if c.process is process)
            _wait(case.url + "/v1/messages", process)
        print(
            f"python {platform.python_version()}, {os.cpu_count()} cores, "
            f"{args.deltas} deltas per answer, {args.workers} proxy worker(s), load average "
            f"{os.getloadavg()[0]:.2f}; {args.rounds} requests a case at concurrency 1 "
            f"({'every case in turn' if args.rotate else 'in pairs with direct ones'}), "
            f"{args.blocks} blocks of {BLOCK} streams at concurrency {CONCURRENCY}; the "
            f"backend's answers {'with a Content-Length' if args.length else 'chunked'}"
            + (" (profiled: the times are cProfile's)" if args.profile else "")
        )
        asyncio.run(_sequential(cases, args.rounds, rotate=args.rotate))
        for block in range(args.blocks):
            for k in range(len(cases)):
                asyncio.run(_block(cases[(block + k) % len(cases)], BLOCK))
        passed = _report(cases, args)
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)
    for out, title, mine in profiles:
        answers = sum(len(c.ttfb) + c.streams16 + CONCURRENCY * args.blocks for c in mine)
        _profile_summary(out, title, answers)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
