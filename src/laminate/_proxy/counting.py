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
from typing import Any, Final

from .._core.response import Usage

__all__ = ["Exchange", "estimate_tokens"]

_ESTIMATE_CHARS_PER_TOKEN: Final = 4


class Exchange:
    """What one request did, for its log line: never a prompt, an answer or a key."""

    __slots__ = (
        "backend",
        "backend_model",
        "client",
        "client_model",
        "client_name",
        "disconnected",
        "error",
        "fallbacks",
        "first_byte",
        "input_tokens",
        "max_tokens_capped",
        "output_tokens",
        "retries",
        "started",
        "status",
        "stream",
    )

    def __init__(self, client: str) -> None:
        self.client = client
        self.client_name: str | None = None
        """The name of the configuration's client that asked (``None``: no name)."""
        self.backend: str | None = None
        self.client_model: str | None = None
        self.backend_model: str | None = None
        self.max_tokens_capped: int | None = None
        """The output limit the request asked for, when the backend's cap lowered it."""
        self.stream = False
        self.status = 0
        self.started = time.perf_counter()
        self.first_byte: float | None = None
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
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

    def line(self) -> str:
        """The log line: one JSON object."""
        now = time.perf_counter()
        ttfb = None if self.first_byte is None else round((self.first_byte - self.started) * 1e3, 2)
        return json.dumps(
            {
                "client": self.client,
                "client_name": self.client_name,
                "backend": self.backend,
                "model": self.backend_model,
                "client_model": self.client_model,
                "backend_model": self.backend_model,
                "max_tokens_capped": self.max_tokens_capped,
                "stream": self.stream,
                "status": self.status,
                "ttfb_ms": ttfb,
                "duration_ms": round((now - self.started) * 1e3, 2),
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "error": self.error,
                "disconnected": self.disconnected,
                "retries": self.retries,
                "fallbacks": self.fallbacks,
            },
            separators=(",", ":"),
        )


def estimate_tokens(data: Mapping[str, Any]) -> int:
    """A request's input tokens, estimated: one token per four characters of its JSON
    text (everything but the model and the settings a model does not read)."""
    counted = {k: v for k, v in data.items() if k not in ("model", "max_tokens", "stream")}
    text = json.dumps(counted, ensure_ascii=False, separators=(",", ":"))
    return max(1, math.ceil(len(text) / _ESTIMATE_CHARS_PER_TOKEN))
