"""What the proxy's clients and their limits cost each request, by where they are counted.

Usage: ``python benchmarks/bench_limits.py [--requests N] [--rounds N]``

Each request of a client goes through the proxy's gate (``_proxy/people.py``): its key
found among the clients' keys, its model checked against the client's patterns, and,
when the client has limits, one check before the request and one count of its tokens
after the answer, in the store the configuration names. Four ways, measured in one run:

- ``no limits``: the key and the model only;
- ``process``: limits counted in a dict (one worker);
- ``SQLite``: limits counted in a SQLite file (the workers of one machine);
- ``Redis``: limits counted in a ``redis-server`` started here on a free loopback port
  (skipped when it is not installed).

The floor, measured in the same rounds, is the least a proxy does with any request:
``json.loads`` of a small chat request (~1.5 KB, one system prompt, three turns) and
``json.dumps`` of its log line. Times are wall-clock time (``time.perf_counter``: a
Redis round trip is mostly waiting), the best of ``--rounds`` rounds of ``--requests``
requests one after the other; the floor and each store alternate within a round, and
each ratio is the median of the rounds' ratios. Nothing else runs in the event loop, so
the figures are the gate's own cost, not what it adds under load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from starlette.requests import Request

from laminate._apis.registry import APIS
from laminate._proxy.counting import Exchange
from laminate._proxy.people import People
from laminate.proxy import Backend, Client, ProxyConfig

KEY = "sk-bench-" + "k" * 40
REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "system": "You are a careful assistant. " * 12,
    "messages": [
        {"role": "user", "content": "Summarize the following paragraph. " * 10},
        {"role": "assistant", "content": "Here is a short summary of it. " * 8},
        {"role": "user", "content": "Now shorter, please, in one sentence. " * 4},
    ],
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _redis_server() -> tuple[subprocess.Popen[bytes], str] | None:
    binary = shutil.which("redis-server")
    if binary is None:
        return None
    port = _free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return process, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    process.terminate()
    return None


def _people(limited: bool, state: str | None) -> People:
    client = Client(
        "bench",
        KEY,
        models=("claude-*", "gpt-*"),
        requests_per_minute=10**9 if limited else None,
        tokens_per_minute=10**12 if limited else None,
    )
    backend = Backend("anthropic", "http://127.0.0.1:1")
    return People(ProxyConfig(backends=(backend,), clients=(client,), state=state))


Step = Callable[[], Awaitable[None]]


def _gate(people: People) -> Step:
    http = APIS["anthropic"].http
    assert http is not None
    scope: dict[str, Any] = {
        "type": "http",
        "method": "POST",
        "path": "/v1/messages",
        "query_string": b"",
        "headers": [(b"x-api-key", KEY.encode()), (b"content-type", b"application/json")],
    }

    async def one() -> None:
        client = people.identify(Request(scope), http)
        await people.admit(client, "claude-sonnet-4-5")
        exchange = Exchange("anthropic")
        exchange.input_tokens, exchange.output_tokens = 1834, 212
        await people.charge(client, exchange)

    return one


def _floor() -> Step:
    body = json.dumps(REQUEST).encode()

    async def one() -> None:
        data = json.loads(body)
        exchange = Exchange("anthropic")
        exchange.client_model = exchange.backend_model = data["model"]
        exchange.input_tokens, exchange.output_tokens = 1834, 212
        exchange.line()

    return one


async def _time(step: Step, requests: int) -> float:
    started = time.perf_counter()
    for _ in range(requests):
        await step()
    return (time.perf_counter() - started) / requests


async def _run(args: argparse.Namespace, redis_url: str | None, folder: str) -> None:
    ways: dict[str, People] = {
        "no limits": _people(False, None),
        "process": _people(True, None),
        "SQLite": _people(True, f"sqlite:{folder}/limits.sqlite"),
    }
    if redis_url is not None:
        ways["Redis"] = _people(True, redis_url)
    for people in ways.values():
        await people.start()
    floor = _floor()
    steps = {name: _gate(people) for name, people in ways.items()}
    for step in (floor, *steps.values()):  # warm up
        await _time(step, 200)
    best: dict[str, float] = {}
    ratios: dict[str, list[float]] = {name: [] for name in steps}
    floor_best = float("inf")
    for _ in range(args.rounds):
        for name, step in steps.items():
            base = await _time(floor, args.requests)
            spent = await _time(step, args.requests)
            floor_best = min(floor_best, base)
            best[name] = min(best.get(name, float("inf")), spent)
            ratios[name].append(spent / base)
    for people in ways.values():
        await people.aclose()
    print(f"floor (json.loads of a {len(json.dumps(REQUEST))}-byte request + its log line): "
          f"{floor_best * 1e6:.1f} µs")  # fmt: skip
    print(f"{'counted in':<12} {'µs/request':>11} {'x floor':>8}")
    for name in steps:
        print(f"{name:<12} {best[name] * 1e6:>11.1f} {statistics.median(ratios[name]):>8.2f}")
    if redis_url is None:
        print("Redis: skipped (redis-server is not installed)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests per round")
    parser.add_argument("--rounds", type=int, default=7, help="rounds (the best is kept)")
    args = parser.parse_args()
    print(
        f"Python {platform.python_version()} on {platform.machine()}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    server = _redis_server()
    folder = tempfile.mkdtemp(prefix="bench-limits-")
    try:
        asyncio.run(_run(args, server[1] if server else None, folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if server is not None:
            server[0].terminate()
            server[0].wait(timeout=10)


if __name__ == "__main__":
    main()
