"""Shared helpers for the test suite: fixtures on disk, running a normalizer, matching."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from laminate import Event, LaminateError, NormalizedResponse, StreamNormalizer
from laminate._core.serialize import response_to_dict

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
REAL_STREAMS = ROOT.parent / "shared" / "real-streams"
REAL_STREAMS_2 = ROOT.parent / "shared" / "real-streams-2"
REAL_STREAMS_3 = ROOT.parent / "shared" / "real-streams-3"
REAL_STREAMS_4 = ROOT.parent / "shared" / "real-streams-4"
REAL_CORPORA = (REAL_STREAMS, REAL_STREAMS_2, REAL_STREAMS_3, REAL_STREAMS_4)
# Each corpus's folders of response recordings, and the provider each one's are read as.
RECORDING_FOLDERS = {
    "openai-chat": "openai",
    "openai-compat": "openai",
    "openai-responses": "openai-responses",
    "anthropic-messages": "anthropic",
    "ollama-native": "ollama",
    "gemini-native": "gemini",
    "bedrock-converse": "bedrock",
    "cohere": "cohere",
}
# A streamed JSON array (Gemini without alt=sse) is named `<name>.stream.json`, so it is
# not taken for an `.expected.json` or `.body.json` file.
STREAM_SUFFIXES = (".sse", ".ndjson", ".eventstream", ".stream.json")

T = TypeVar("T")

needs_real_streams = pytest.mark.skipif(
    not REAL_STREAMS.is_dir(),
    reason="the shared real-stream recordings (../shared/real-streams) are not beside this clone",
)
needs_real_streams_2 = pytest.mark.skipif(
    not REAL_STREAMS_2.is_dir(),
    reason="the shared recordings ../shared/real-streams-2 are not beside this clone",
)
needs_real_streams_3 = pytest.mark.skipif(
    not REAL_STREAMS_3.is_dir(),
    reason="the shared recordings ../shared/real-streams-3 are not beside this clone",
)
needs_real_streams_4 = pytest.mark.skipif(
    not REAL_STREAMS_4.is_dir(),
    reason="the shared recordings ../shared/real-streams-4 are not beside this clone",
)


def recorded_bodies() -> list[Path]:
    """Every recorded complete body (a ``.json`` response file holding one object, not
    a streamed array) of the corpora beside this clone, in the folders of the APIs
    laminate reads."""
    return [
        path
        for corpus in REAL_CORPORA
        if corpus.is_dir()
        for folder in RECORDING_FOLDERS
        if (corpus / folder).is_dir()
        for path in sorted((corpus / folder).iterdir())
        if path.name.endswith(".json") and path.read_bytes().lstrip()[:1] == b"{"
    ]


@dataclass(frozen=True)
class Fixture:
    path: Path
    provider: str
    expected: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.path.relative_to(FIXTURES))

    @property
    def body_path(self) -> Path:
        return self.path.with_name(stem_of(self.path) + ".body.json")


def stem_of(path: Path) -> str:
    """A fixture's name without its stream suffix."""
    name = path.name
    suffix = next(s for s in STREAM_SUFFIXES if name.endswith(s))
    return name[: -len(suffix)]


def stream_fixtures() -> list[Fixture]:
    found = []
    for path in sorted(FIXTURES.rglob("*")):
        if not path.name.endswith(STREAM_SUFFIXES):
            continue
        expected_path = path.with_name(stem_of(path) + ".expected.json")
        expected = json.loads(expected_path.read_text("utf-8"))
        found.append(Fixture(path, str(expected.get("provider", path.parent.name)), expected))
    return found


@dataclass
class Outcome:
    events: list[Event]
    error: LaminateError | None

    @property
    def response(self) -> NormalizedResponse | None:
        if self.error is not None:
            return self.error.partial
        for event in reversed(self.events):
            response = getattr(event, "response", None)
            if isinstance(response, NormalizedResponse):
                return response
        return None


def run_chunks(chunks: Iterable[bytes], provider: str | None = None, **options: Any) -> Outcome:
    """Feed the chunks, then close; collect events until the first error."""
    normalizer = StreamNormalizer(provider, **options)
    events: list[Event] = []
    try:
        for chunk in chunks:
            events.extend(normalizer.feed(chunk))
        events.extend(normalizer.close())
    except LaminateError as exc:
        return Outcome(events, exc)
    return Outcome(events, None)


def assert_same_outcome(one: Outcome, other: Outcome) -> None:
    """The same events, the same error (type, text, offset) and the same response."""
    assert one.events == other.events
    assert type(one.error) is type(other.error)
    if one.error is not None and other.error is not None:
        assert str(one.error) == str(other.error)
        assert getattr(one.error, "offset", None) == getattr(other.error, "offset", None)
    first, second = one.response, other.response
    assert (first is None) == (second is None)
    if first is not None and second is not None:
        assert response_to_dict(first) == response_to_dict(second)


def split_at(data: bytes, cuts: Iterable[int]) -> Iterator[bytes]:
    start = 0
    for cut in sorted(set(cuts)):
        if 0 < cut < len(data):
            yield data[start:cut]
            start = cut
    yield data[start:]


def lines_of(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [data]


def bytes_of(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def subset_mismatch(expected: Any, actual: Any, path: str = "$") -> str | None:
    """Where ``actual`` departs from ``expected`` (keys absent from ``expected`` are not
    checked; lists must match in length, element by element), or ``None``."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path}: expected an object, got {actual!r}"
        for key, value in expected.items():
            if key not in actual:
                return f"{path}.{key}: missing"
            found = subset_mismatch(value, actual[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{path}: expected {len(expected)} items, got {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found = subset_mismatch(e, a, f"{path}[{i}]")
            if found:
                return found
        return None
    if expected != actual:
        return f"{path}: expected {expected!r}, got {actual!r}"
    return None


def check_expected(expected: dict[str, Any], outcome: Outcome) -> None:
    """Compare an outcome with a fixture's ``.expected.json``."""
    want_error = expected.get("error")
    if want_error is None:
        assert outcome.error is None, f"unexpected error: {outcome.error!r}"
    else:
        assert outcome.error is not None, "expected an error, the stream completed"
        assert type(outcome.error).__name__ == want_error["type"]
        for key, value in want_error.items():
            if key != "type":
                assert getattr(outcome.error, key) == value, key
    response = outcome.response
    assert response is not None
    skip = {"description", "error"} | ({"stop_reason"} if want_error else set())
    wanted = {k: v for k, v in expected.items() if k not in skip}
    mismatch = subset_mismatch(wanted, response_to_dict(response))
    assert mismatch is None, mismatch


def wait_for(lines: list[T], count: int) -> list[T]:
    """The proxy's log lines once there are `count` of them (or after 5 s): a streamed
    answer's line is written just after its last bytes went out, so a client that has
    read the whole answer may look a moment before it is there."""
    deadline = time.monotonic() + 5
    while len(lines) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return lines
