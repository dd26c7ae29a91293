"""The proxy's metrics, read from each request's :class:`~.counting.Exchange` when it ends
and written in Prometheus' text exposition format (version 0.0.4) for ``GET /metrics``.

Each worker process counts in memory: a request costs a few dictionary updates. Served
by several workers, each also writes what it counted to a file of its own in a directory
they share (at most every :data:`FLUSH_SECONDS`, and when it stops), and a scrape sums
the files of every worker with its own live counts: counters from every worker that ever
ran (a worker that died keeps its counts), gauges from the live ones only.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from .counting import Exchange

__all__ = ["CONTENT_TYPE", "FLUSH_SECONDS", "METRICS", "Metrics"]

CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
FLUSH_SECONDS: Final = 0.5
"""The longest a worker's counts wait before the other workers' scrapes see them."""

_SECONDS_BUCKETS: Final = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    600.0,
)  # fmt: skip
# Past this many models, another model is counted as "other": a client may name any model.
_MODELS_KEPT: Final = 500

# What is exported: name -> (type, label names, help). The order is the exposition's.
METRICS: Final[dict[str, tuple[str, tuple[str, ...], str]]] = {
    "laminate_requests_total": (
        "counter",
        ("api", "backend", "model", "client", "status"),
        "Requests answered, by the client's API, the backend, the backend's model, the "
        "client's name and the HTTP status.",
    ),
    "laminate_time_to_first_byte_seconds": (
        "histogram",
        ("api", "backend"),
        "Seconds from a request's arrival to the first byte of its answer.",
    ),
    "laminate_request_duration_seconds": (
        "histogram",
        ("api", "backend"),
        "Seconds from a request's arrival to the end of its answer.",
    ),
    "laminate_input_tokens_total": (
        "counter",
        ("client", "model"),
        "Input tokens the backends reported, cached or not.",
    ),
    "laminate_output_tokens_total": (
        "counter",
        ("client", "model"),
        "Output tokens the backends reported.",
    ),
    "laminate_cache_read_tokens_total": (
        "counter",
        ("client", "model"),
        "Input tokens the backends reported as read from their prompt cache.",
    ),
    "laminate_cache_write_tokens_total": (
        "counter",
        ("client", "model"),
        "Input tokens the backends reported as written to their prompt cache.",
    ),
    "laminate_retries_total": (
        "counter",
        ("backend",),
        "Tries of a request beyond its first, by the backend that answered at last.",
    ),
    "laminate_fallbacks_total": (
        "counter",
        ("backend",),
        "Requests sent on to a fallback backend, counted per fallback tried.",
    ),
    "laminate_open_streams": (
        "gauge",
        (),
        "Streamed requests in progress.",
    ),
}

_TOKENS: Final = (
    ("laminate_input_tokens_total", "input_tokens"),
    ("laminate_output_tokens_total", "output_tokens"),
    ("laminate_cache_read_tokens_total", "cache_read_tokens"),
    ("laminate_cache_write_tokens_total", "cache_write_tokens"),
)

_Key = tuple[str, tuple[str, ...]]


class Metrics:
    """One worker's counts, and the exposition of every worker's (``directory``: where
    the workers of one server write theirs; ``None``: this process is the only one)."""

    def __init__(self, directory: str | None = None) -> None:
        self.counters: dict[_Key, float] = {}
        # Per series: one count per bucket (not cumulative), then +Inf's, then the sum.
        self.histograms: dict[_Key, list[float]] = {}
        self.open_streams = 0
        self._models: set[str] = set()
        self._directory = None if directory is None else Path(directory)
        self._dirty = False
        self._flusher: asyncio.Task[None] | None = None

    def record(self, exchange: Exchange, now: float) -> None:
        """Count one request that ended at ``now`` (``time.perf_counter``)."""
        backend = exchange.backend or ""
        client = exchange.client_name or ""
        model = self._model(exchange.backend_model or exchange.client_model or "")
        counters = self.counters
        key: _Key = (
            "laminate_requests_total",
            (exchange.client, backend, model, client, str(exchange.status)),
        )
        counters[key] = counters.get(key, 0) + 1
        for name, field in _TOKENS:
            value = getattr(exchange, field)
            if value:
                key = (name, (client, model))
                counters[key] = counters.get(key, 0) + value
        if exchange.retries:
            key = ("laminate_retries_total", (backend,))
            counters[key] = counters.get(key, 0) + exchange.retries
        if exchange.fallbacks:
            key = ("laminate_fallbacks_total", (backend,))
            counters[key] = counters.get(key, 0) + exchange.fallbacks
        labels = (exchange.client, backend)
        ttfb = exchange.ttfb()
        if ttfb is not None:
            self._observe(("laminate_time_to_first_byte_seconds", labels), ttfb)
        self._observe(("laminate_request_duration_seconds", labels), now - exchange.started)
        self._dirty = True

    def _model(self, model: str) -> str:
        if model in self._models:
            return model
        if len(self._models) >= _MODELS_KEPT:
            return "other"
        self._models.add(model)
        return model

    def _observe(self, key: _Key, seconds: float) -> None:
        counts = self.histograms.get(key)
        if counts is None:
            counts = self.histograms[key] = [0.0] * (len(_SECONDS_BUCKETS) + 2)
        counts[bisect.bisect_left(_SECONDS_BUCKETS, seconds)] += 1
        counts[-1] += seconds

    # -- several workers -------------------------------------------------------------------

    def start(self) -> None:
        """Begin writing this worker's counts for the others (in a running asyncio loop;
        nothing to do for a single process)."""
        if self._directory is not None and self._flusher is None:
            self._flusher = asyncio.get_running_loop().create_task(self._flush_often())

    async def stop(self) -> None:
        """Stop writing, after a last write (the open streams then count for nothing)."""
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
            self._flusher = None
            self.open_streams = 0
            self.flush()

    async def _flush_often(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_SECONDS)
            if self._dirty:
                self.flush()

    def _snapshot(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "counters": [
                [name, list(labels), value] for (name, labels), value in self.counters.items()
            ],
            "histograms": [
                [name, list(labels), counts] for (name, labels), counts in self.histograms.items()
            ],
            "open_streams": self.open_streams,
        }

    def flush(self) -> None:
        """Write this worker's counts to its file (replaced whole, so a reader never sees
        half of it)."""
        if self._directory is None:
            return
        self._dirty = False
        path = self._directory / f"{os.getpid()}.json"
        partial = path.with_suffix(".tmp")
        partial.write_text(json.dumps(self._snapshot()), encoding="utf-8")
        os.replace(partial, path)

    def _others(self) -> Iterable[dict[str, Any]]:
        if self._directory is None:
            return
        mine = f"{os.getpid()}.json"
        for path in self._directory.glob("*.json"):
            if path.name == mine:
                continue
            try:
                yield json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):  # removed meanwhile: the server is stopping
                continue

    # -- the exposition --------------------------------------------------------------------

    def exposition(self) -> str:
        """Every worker's counts in Prometheus' text format."""
        counters = dict(self.counters)
        histograms = {key: list(counts) for key, counts in self.histograms.items()}
        open_streams = self.open_streams
        for other in self._others():
            for name, labels, value in other["counters"]:
                key = (name, tuple(labels))
                counters[key] = counters.get(key, 0) + value
            for name, labels, counts in other["histograms"]:
                key = (name, tuple(labels))
                mine = histograms.get(key)
                if mine is None:
                    histograms[key] = list(counts)
                else:
                    histograms[key] = [a + b for a, b in zip(mine, counts, strict=True)]
            if _alive(other["pid"]):
                open_streams += other["open_streams"]
        lines: list[str] = []
        for name, (kind, names, text) in METRICS.items():
            lines.append(f"# HELP {name} {text}")
            lines.append(f"# TYPE {name} {kind}")
            if kind == "gauge":
                lines.append(f"{name} {open_streams}")
            elif kind == "counter":
                lines.extend(
                    f"{name}{_labels(names, labels)} {_number(value)}"
                    for (metric, labels), value in sorted(counters.items())
                    if metric == name
                )
            else:
                for (metric, labels), counts in sorted(histograms.items()):
                    if metric == name:
                        lines.extend(_histogram(name, names, labels, counts))
        return "\n".join(lines) + "\n"


def _histogram(
    name: str, names: tuple[str, ...], labels: tuple[str, ...], counts: list[float]
) -> Iterable[str]:
    total = 0.0
    for bound, count in zip((*_SECONDS_BUCKETS, "+Inf"), counts, strict=False):
        total += count
        le = bound if isinstance(bound, str) else repr(bound)
        yield f"{name}_bucket{_labels((*names, 'le'), (*labels, le))} {_number(total)}"
    yield f"{name}_sum{_labels(names, labels)} {_number(counts[-1])}"
    yield f"{name}_count{_labels(names, labels)} {_number(total)}"


def _labels(names: tuple[str, ...], values: tuple[str, ...]) -> str:
    if not names:
        return ""
    pairs = ",".join(f'{n}="{_escaped(v)}"' for n, v in zip(names, values, strict=True))
    return "{" + pairs + "}"


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True
