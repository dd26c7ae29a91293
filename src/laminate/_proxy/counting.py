"""What one request did and used: :class:`Exchange`, the record its log line is written
from (the client's API, the backend, the client's model and the backend's, the status,
the times, the tokens the backend reported, the error's kind), and
:func:`estimate_tokens` for a count no backend gives.

Every request fills one :class:`Exchange` as it goes and hands it on to the log when it
ends; whatever else is counted per request (metrics, a client's limits) reads the same
record. The tokens of an answer that passes through are found by
:class:`~.usage.UsageScan`; a translated answer's come with its normalized response.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from .._core.response import Usage

__all__ = ["ERROR_TEXT_CAP", "Exchange", "estimate_tokens"]

# The log line's writer, made once (``json.dumps`` with any option makes one per call).
_LINE: Final = json.JSONEncoder(separators=(",", ":"))

_ESTIMATE_CHARS_PER_TOKEN: Final = 4
ERROR_TEXT_CAP: Final = 300
"""The most characters of an error's text a log line holds."""


class Exchange:
    """What one request did, for its log line and its metrics: never a prompt, an answer
    or a key."""

    __slots__ = (
        "backend",
        "backend_model",
        "cache_read_tokens",
        "cache_write_tokens",
        "client",
        "client_model",
        "client_name",
        "disconnected",
        "error",
        "fallbacks",
        "first_byte",
        "input_tokens",
        "max_tokens_capped",
        "method",
        "output_tokens",
        "path",
        "retries",
        "started",
        "status",
        "stream",
        "wall",
    )

    def __init__(self, client: str, method: str = "POST", path: str = "") -> None:
        self.client = client
        """The client's API."""
        self.method = method
        self.path = path
        self.client_name: str | None = None
        """The name of the ``[[client]]`` whose key was presented (``None``: no such
        entry)."""
        self.client_model: str | None = None
        """The model the client asked for."""
        self.backend: str | None = None
        """The backend that answered."""
        self.backend_model: str | None = None
        """The model asked of it."""
        self.max_tokens_capped: int | None = None
        """The output limit the request asked for, when the backend's cap lowered it."""
        self.stream = False
        self.status = 0
        self.wall = time.time()
        self.started = time.perf_counter()
        self.first_byte: float | None = None
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.cache_read_tokens: int | None = None
        self.cache_write_tokens: int | None = None
        self.error: str | None = None
        self.disconnected = False
        self.retries = 0
        """Requests sent again to a backend that failed this one before its answer
        began (after a wait, or with the next key of its pool)."""
        self.fallbacks = 0
        """Backends this request went on to after the first one failed."""

    def usage(self, usage: Usage | None) -> None:
        if usage is not None:  # every input token, cached or not, whatever the backend
            self.input_tokens = usage.total_input_tokens
            self.output_tokens = usage.output_tokens
            self.cache_read_tokens = usage.cache_read_tokens
            self.cache_write_tokens = usage.cache_write_tokens

    def ttfb(self) -> float | None:
        """Seconds from the request to the first byte of its answer (``None``: none sent)."""
        return None if self.first_byte is None else self.first_byte - self.started

    def line(self, now: float | None = None) -> str:
        """The log line: one JSON object (``now``: the end, from ``time.perf_counter``)."""
        if now is None:
            now = time.perf_counter()
        ttfb = self.ttfb()
        stamp = datetime.fromtimestamp(self.wall, UTC).isoformat(timespec="milliseconds")
        return _LINE.encode(
            {
                "time": stamp.replace("+00:00", "Z"),
                "method": self.method,
                "path": self.path,
                "api": self.client,
                "client_name": self.client_name,
                "client_model": self.client_model,
                "backend": self.backend,
                "backend_model": self.backend_model,
                "max_tokens_capped": self.max_tokens_capped,
                "stream": self.stream,
                "status": self.status,
                "ttfb_ms": None if ttfb is None else round(ttfb * 1e3, 2),
                "duration_ms": round((now - self.started) * 1e3, 2),
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cache_read_tokens": self.cache_read_tokens,
                "cache_write_tokens": self.cache_write_tokens,
                "error": self.error,
                "disconnected": self.disconnected,
                "retries": self.retries,
                "fallbacks": self.fallbacks,
            }
        )


def estimate_tokens(data: Mapping[str, Any]) -> int:
    """A request's input tokens, estimated: one token per four characters of its JSON
    text (everything but the model and the settings a model does not read)."""
    counted = {k: v for k, v in data.items() if k not in ("model", "max_tokens", "stream")}
    text = json.dumps(counted, ensure_ascii=False, separators=(",", ":"))
    return max(1, math.ceil(len(text) / _ESTIMATE_CHARS_PER_TOKEN))
