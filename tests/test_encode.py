"""Writing streams: every answer laminate reads, written as every target, reads back the same.

The sources are every fixture and every recording in ../shared/real-streams*/ that
normalizes to a complete answer. For each source and each provider target, the bytes the
encoder wrote are normalized again (whole, with the provider named and detected, and in
random chunks) and must give the same text, reasoning, tool calls, stop kind and token
counts, except what the target cannot carry (the table in docs/writing-streams.md,
restated here as :func:`expected`). The ``events`` target must give back equal events.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import laminate
from laminate import (
    Event,
    InvalidToolUse,
    LaminateError,
    NormalizedResponse,
    Reasoning,
    ResponseDone,
    StopReason,
    StreamNormalizer,
    ToolUse,
)
from laminate._apis.anthropic import stream as anthropic_stream
from laminate._apis.ollama import stream as ollama_stream
from laminate._apis.openai_chat import stream as openai_chat_stream
from laminate._encode.encoder import StreamEncoder, targets

from .support import FIXTURES, REAL_STREAMS, REAL_STREAMS_2, STREAM_SUFFIXES, split_at

# -- the sources -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    name: str
    path: Path
    provider: str | None


def _recordings() -> list[Source]:
    found = []
    for root in (REAL_STREAMS, REAL_STREAMS_2):
        if not root.is_dir():
            continue
        for path in sorted(root.glob("*/*")):
            stream = path.name.endswith((*STREAM_SUFFIXES, ".ndjson")) or (
                path.suffix == ".json" and "array" in path.name
            )
            if stream:
                found.append(Source(f"{root.name}/{path.parent.name}/{path.name}", path, None))
    return found


def _fixtures() -> list[Source]:
    found = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.name.endswith(STREAM_SUFFIXES):
            stem = path.name[: -len(next(s for s in STREAM_SUFFIXES if path.name.endswith(s)))]
            expected = json.loads(path.with_name(stem + ".expected.json").read_text("utf-8"))
            provider = str(expected.get("provider", path.parent.name))
            found.append(Source(str(path.relative_to(FIXTURES)), path, provider))
    return found


@cache
def events_of(source: Source) -> list[Event] | None:
    """The events of a source that normalizes to a complete answer, else ``None``."""
    normalizer = StreamNormalizer(source.provider if source.provider in targets() else None)
    try:
        events = normalizer.feed(source.path.read_bytes())
        return events + normalizer.close()
    except (LaminateError, KeyError):
        return None


SOURCES = list(_fixtures() + _recordings())


def encode(events: list[Event], target: str) -> bytes:
    encoder = StreamEncoder(target)
    return b"".join(encoder.encode(e) for e in events) + encoder.close()


def normalize_bytes(data: bytes, provider: str | None, chunks: list[bytes] | None = None) -> Any:
    normalizer = StreamNormalizer(provider)
    events: list[Event] = []
    for chunk in chunks or [data]:
        events.extend(normalizer.feed(chunk))
    events.extend(normalizer.close())
    done = events[-1]
    assert isinstance(done, ResponseDone)
    return events


# -- what a target carries -------------------------------------------------------------------

_COUNTS = {
    "openai": (
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "reasoning_tokens",
    ),
    "openai-responses": ("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens"),
    "anthropic": ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"),
    "ollama": ("input_tokens", "output_tokens"),
}
# Stop-reason kinds a target cannot name, and what its reader gives instead.
_STOP_LOST: dict[str, dict[str | None, str | None]] = {
    "openai": {
        "stop_sequence": "end_turn",
        "refusal": "end_turn",
        "pause_turn": "end_turn",
        "context_window_exceeded": "max_tokens",
    },
    "openai-responses": {
        "stop_sequence": "end_turn",
        "refusal": "end_turn",
        "pause_turn": "end_turn",
        "context_window_exceeded": "end_turn",
        None: "end_turn",
    },
    "anthropic": {"content_filter": "refusal"},
    "ollama": {
        "stop_sequence": "end_turn",
        "context_window_exceeded": "max_tokens",
        "content_filter": None,
        "refusal": None,
        "pause_turn": None,
    },
}
# The targets checked here (the Gemini, Cohere and Bedrock writers have their own tables
# in test_encode_more.py).
PROVIDER_TARGETS = tuple(t for t in targets() if t in _COUNTS)
_TABLES = {
    "openai": openai_chat_stream.STOP_REASONS,
    "openai-responses": {},
    "anthropic": anthropic_stream.STOP_REASONS,
    "ollama": ollama_stream.STOP_REASONS,
}
# Readers that name TOOL_USE from the calls themselves when the wire says a plain stop.
_CALLS_NAME_STOP = {"openai", "openai-responses", "ollama"}


def calls_of(response: NormalizedResponse, target: str) -> list[tuple[Any, ...]]:
    calls: list[tuple[Any, ...]] = []
    for block in response.content:
        if isinstance(block, ToolUse):
            calls.append((block.id, block.name, block.input.value))
        elif isinstance(block, InvalidToolUse) and target != "ollama":
            calls.append((block.id, block.name, block.raw_input))
    if target == "ollama":  # Ollama has no tool-call ids
        calls = [call[1:] for call in calls]
    return calls


def summary(response: NormalizedResponse, target: str) -> dict[str, Any]:
    return {
        "text": response.text(),
        "reasoning": "".join(b.text for b in response.content if isinstance(b, Reasoning)),
        "calls": calls_of(response, target),
    }


def expected_stop(response: NormalizedResponse, target: str) -> str | None:
    """The stop kind the target's reader gives (``None``: an unknown value)."""
    kind = response.stop_reason.kind
    if kind is None:  # an unknown value is written as sent: the target may know it
        named = _TABLES[target].get(response.stop_reason.raw)
        kind = named.kind if named is not None else None
    lost = _STOP_LOST[target]
    if kind in lost:
        kind = lost[kind]
    if target in _CALLS_NAME_STOP and kind == "end_turn" and calls_of(response, target):
        kind = "tool_use"
    if target == "ollama" and kind == "tool_use" and not calls_of(response, target):
        kind = "end_turn"
    return kind


def check_same(source: NormalizedResponse, back: NormalizedResponse, target: str) -> None:
    assert summary(back, target) == summary(source, target)
    assert back.stop_reason.kind == expected_stop(source, target), (
        source.stop_reason,
        back.stop_reason,
    )
    if back.stop_reason.kind is None:  # kept as sent, or named by its kind
        assert back.stop_reason.raw in (source.stop_reason.raw, source.stop_reason.kind)
    for name in _COUNTS[target]:
        sent, got = getattr(source.usage, name), getattr(back.usage, name)
        # A count the source did not report may read back as a schema's placeholder 0.
        assert got == sent or (sent is None and got in (None, 0)), (name, sent, got)
    if target == source.provider:
        assert opaque(back) == opaque(source)
    else:
        assert not opaque(back) - opaque(source), "an opaque token was made up"


def opaque(response: NormalizedResponse) -> set[tuple[Any, ...]]:
    """The opaque tokens of a response; back to its own API they all survive (Chat
    Completions may move a block that ends at the finish reason: the order is not
    compared)."""
    found: set[tuple[Any, ...]] = set()
    for block in response.content:
        if isinstance(block, Reasoning) and (block.signature or block.redacted):
            found.add(("reasoning", block.signature, block.redacted))
        elif getattr(block, "signature", None):
            found.add((type(block).__name__, getattr(block, "signature", None)))
    return found


# -- the round trips -------------------------------------------------------------------------


def _cases() -> list[Any]:
    return [
        pytest.param(source, target, id=f"{source.name}->{target}")
        for source in SOURCES
        for target in PROVIDER_TARGETS
    ]


@pytest.mark.parametrize(("source", "target"), _cases())
def test_round_trip(source: Source, target: str) -> None:
    events = events_of(source)
    if events is None:
        pytest.skip("the source does not normalize to a complete answer")
    original = events[-1]
    assert isinstance(original, ResponseDone)
    data = encode(events, target)
    rng = random.Random(source.name + target)
    cuts = [rng.randrange(len(data) + 1) for _ in range(rng.randrange(1, 12))]
    for provider, chunks in (
        (target, None),
        (None, None),
        (target, list(split_at(data, cuts))),
    ):
        back = normalize_bytes(data, provider, chunks)[-1].response
        check_same(original.response, back, target)


@pytest.mark.parametrize("source", SOURCES, ids=[s.name for s in SOURCES])
def test_events_target_gives_back_equal_events(source: Source) -> None:
    events = events_of(source)
    if events is None:
        pytest.skip("the source does not normalize to a complete answer")
    lines = encode(events, "events").split(b"\n")[:-1]
    views: dict[int, Any] = {}
    back = [laminate.event_from_dict(json.loads(line), views) for line in lines]
    assert back == events


_SOME = [s for s in SOURCES if events_of(s) is not None]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(_SOME),
    st.sampled_from(PROVIDER_TARGETS),
    st.lists(st.integers(min_value=0, max_value=1 << 20), max_size=20),
)
def test_round_trip_any_chunking(source: Source, target: str, cuts: list[int]) -> None:
    events = events_of(source)
    assert events is not None
    data = encode(events, target)
    whole = normalize_bytes(data, target)
    split = normalize_bytes(data, target, list(split_at(data, [c % (len(data) + 1) for c in cuts])))
    assert split == whole
    done = events[-1]
    assert isinstance(done, ResponseDone)
    check_same(done.response, whole[-1].response, target)


def test_stop_kinds_are_named_in_every_table() -> None:
    for table in _STOP_LOST.values():
        for kind in table:
            assert kind is None or kind in StopReason.KINDS
