"""What the proxy's metrics cost per request, against the log line every request writes.

Usage: ``python benchmarks/bench_metrics.py [--requests N] [--repeat N]``

Each request ends with its JSON log line (``Exchange.line``) and its count in the metrics
(``Metrics.record``). Measured in one run, on the same ``--requests`` ended exchanges
(a mix of 4 client APIs, 3 backends, 20 models, 10 client names, 4 statuses, with token
counts, retries now and then):

- ``log line`` (the floor): ``Exchange.line``, what each request cost before metrics;
- ``metrics``: ``Metrics.record``, what they add to each request;
- ``flush``: one worker writing all it counted to its file for the other workers (at
  most twice a second per worker, whatever the traffic), per flush;
- ``scrape``: ``GET /metrics``'s text, summed over two workers, per scrape.

Times are CPU time (``process_time``), the best of ``--repeat`` runs, the garbage
collector on; the ratio is to the floor's best.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from laminate._proxy.counting import Exchange
from laminate._proxy.metrics import Metrics

APIS = ("anthropic", "openai", "openai-responses", "gemini")
BACKENDS = ("local", "anthropic", "openrouter")
MODELS = tuple(f"model-{n}" for n in range(20))
CLIENTS = tuple(f"person-{n}" for n in range(10))
STATUSES = (200, 200, 200, 200, 200, 200, 429, 400, 502)


def exchanges(count: int) -> list[tuple[Exchange, float]]:
    chosen = random.Random(7)
    made = []
    for _ in range(count):
        exchange = Exchange(chosen.choice(APIS), "POST", "/v1/messages")
        exchange.client_name = chosen.choice(CLIENTS)
        exchange.client_model = exchange.backend_model = chosen.choice(MODELS)
        exchange.backend = chosen.choice(BACKENDS)
        exchange.status = chosen.choice(STATUSES)
        exchange.stream = True
        exchange.first_byte = exchange.started + chosen.uniform(0.05, 2.0)
        exchange.input_tokens = chosen.randrange(100, 100_000)
        exchange.output_tokens = chosen.randrange(1, 4_000)
        exchange.cache_read_tokens = chosen.choice((None, 0, chosen.randrange(1, 50_000)))
        exchange.cache_write_tokens = chosen.choice((None, 0, chosen.randrange(1, 5_000)))
        exchange.retries = chosen.choice((0, 0, 0, 0, 1))
        made.append((exchange, exchange.started + chosen.uniform(0.1, 60.0)))
    return made


def best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    made = exchanges(args.requests)

    def log_lines() -> None:
        for exchange, end in made:
            exchange.line(end)

    def record() -> None:
        metrics = Metrics()
        for exchange, end in made:
            metrics.record(exchange, end)

    floor = best(log_lines, args.repeat)
    counted = best(record, args.repeat)
    with tempfile.TemporaryDirectory() as directory:
        mine = Metrics(directory)
        for exchange, end in made:
            mine.record(exchange, end)
        flush = best(mine.flush, args.repeat)
        # The other worker's file: the same counts under another (live) process's id.
        written = Path(directory, f"{os.getpid()}.json")
        written.rename(Path(directory, f"{os.getppid()}.json"))
        scrape = best(mine.exposition, args.repeat)
        text = mine.exposition()
        samples = sum(1 for line in text.splitlines() if not line.startswith("#"))

    per = 1e6 / args.requests
    print(f"Python {platform.python_version()}, {args.requests} requests, best of {args.repeat}")
    print(f"load average {os.getloadavg()[0]:.2f}")
    print()
    print("| what | µs | ratio to the log line |")
    print("|---|---|---|")
    print(f"| log line, per request (floor) | {floor * per:.2f} | 1.00 |")
    print(f"| metrics, per request | {counted * per:.2f} | {counted / floor:.2f} |")
    print(f"| flush, per flush (≤ 2/s per worker) | {flush * 1e6:.0f} | |")
    print(f"| scrape of two workers, {samples} samples | {scrape * 1e6:.0f} | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
