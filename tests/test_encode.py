"""Every writer: every answer laminate reads, written as every API, reads back the same.

The writers are those of the registry: every API record with an encoder, so a new API's
writers are in these tests the moment its registry line exists. The sources are every
fixture and every recording in ../shared/real-streams*/ that normalizes to a complete
answer. For each source and each API, the stream the encoder wrote is normalized again
(whole, with the provider named and detected, and in random chunks), and the complete
body ``encode_response`` wrote is read again (named and detected); both must give the
same text, reasoning, tool calls (names, arguments, ids where the API keeps them), stop
kind and token counts as the source, except what the API cannot carry: its entry in
``tests/carries.py`` (``Carries``), which ``docs/writing-streams.md`` states in words. The
``events`` target must give back equal events.
"""

from __future__ import annotations

import itertools
import json
import random
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import laminate
from laminate import (
    BlockStart,
    Event,
    InvalidToolUse,
    LaminateError,
    NormalizedResponse,
    Reasoning,
    ResponseDone,
    ResponseStart,
    StopReason,
    StreamNormalizer,
    Text,
    TextDelta,
    ToolUse,
    Usage,
)
from laminate._apis.registry import APIS
from laminate._encode.encoder import StreamEncoder, targets

from .carries import CARRIES, Carries
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


# -- what a writer carries -------------------------------------------------------------------

WRITERS = tuple(name for name, record in APIS.items() if record.encoder is not None)
COMPLETE = [s for s in SOURCES if events_of(s) is not None]
Form = str  # "stream" or "body"


def carries(target: str) -> Carries:
    found = CARRIES.get(target)
    assert found is not None, f"{target} has a writer but tests/carries.py does not say what"
    return found


def calls_of(response: NormalizedResponse, target: str, form: Form) -> list[tuple[Any, ...]]:
    """The calls a target carries, with their ids where it keeps them."""
    carried = carries(target)
    invalid = carried.invalid_calls if form == "stream" else carried.invalid_calls_in_body
    calls: list[tuple[Any, ...]] = []
    for block in response.content:
        if isinstance(block, ToolUse):
            calls.append((block.id, block.name, block.input.value))
        elif isinstance(block, InvalidToolUse) and invalid:
            calls.append((block.id, block.name, block.raw_input))
    if not carried.call_ids:
        calls = [call[1:] for call in calls]
    return calls


def summary(response: NormalizedResponse, target: str, form: Form) -> dict[str, Any]:
    return {
        "text": response.text(),
        "reasoning": "".join(b.text for b in response.content if isinstance(b, Reasoning)),
        "calls": calls_of(response, target, form),
    }


def expected_stop(response: NormalizedResponse, target: str, form: Form) -> str | None:
    """The stop kind the target's reader gives (``None``: an unknown value)."""
    carried = carries(target)
    kind = response.stop_reason.kind
    if kind is None:  # an unknown value is written as sent: the target may know it
        named = carried.stop_reasons.get(response.stop_reason.raw)
        kind = named.kind if named is not None else None
    kept = form == "body" and kind in carried.body_stop_kinds and bool(response.text())
    if kind in carried.stop_lost and not kept:
        kind = carried.stop_lost[kind]
    has_calls = bool(calls_of(response, target, form))
    if carried.calls_name_tool_use and kind == "end_turn" and has_calls:
        kind = "tool_use"
    if carried.tool_use_needs_calls and kind == "tool_use" and not has_calls:
        kind = "end_turn"
    return kind


def check_same(
    source: NormalizedResponse, back: NormalizedResponse, target: str, form: Form = "stream"
) -> None:
    carried = carries(target)
    assert summary(back, target, form) == summary(source, target, form)
    assert back.stop_reason.kind == expected_stop(source, target, form), (
        source.stop_reason,
        back.stop_reason,
    )
    if back.stop_reason.kind is None:  # kept as sent, named by its kind, or the API's "other"
        allowed = {source.stop_reason.raw, source.stop_reason.kind}
        if carried.foreign_stop and source.provider != target:
            allowed.add(carried.foreign_stop)
        assert back.stop_reason.raw in allowed, (source.stop_reason, back.stop_reason)
    if carried.response_id:
        assert back.id == source.id or (not source.id and back.id)
    if carried.model:
        assert back.model == source.model
    for name in carried.counts:
        # The input count is compared as every input token, cached or not: each target
        # writes it in its own API's meaning, and cache writes it has no field for fold
        # into it.
        field = "total_input_tokens" if name == "input_tokens" else name
        sent, got = getattr(source.usage, field), getattr(back.usage, field)
        if (
            carried.reasoning_needs_output
            and name == "reasoning_tokens"
            and source.usage.output_tokens is None
        ):
            sent = None  # added to the output: none without an output
        # A count the source did not report may read back as a schema's placeholder 0.
        assert got == sent or (sent is None and got in (None, 0)), (name, sent, got)
    if target == source.provider and (form == "stream" or carried.opaque_in_body):
        assert opaque(back) == opaque(source)
    elif target == source.provider:
        assert opaque(back) <= opaque(source), "an opaque token was made up"
    else:
        assert not opaque(back), "an opaque token went to another API"


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


def answer(source: Source) -> NormalizedResponse:
    events = events_of(source)
    assert events is not None
    done = events[-1]
    assert isinstance(done, ResponseDone)
    return done.response


def test_every_writer_says_what_it_carries() -> None:
    assert WRITERS
    assert sorted(CARRIES) == sorted(WRITERS), "tests/carries.py names the APIs with a writer"
    for target in WRITERS:
        carried = carries(target)
        assert set(carried.counts) <= set(Usage.__dataclass_fields__) - {"raw"}, target


# -- the round trips -------------------------------------------------------------------------


def _cases() -> list[Any]:
    return [
        pytest.param(source, target, id=f"{source.name}->{target}")
        for source in COMPLETE
        for target in WRITERS
    ]


@pytest.mark.parametrize(("source", "target"), _cases())
def test_stream_round_trip(source: Source, target: str) -> None:
    events = events_of(source)
    assert events is not None
    data = encode(events, target)
    rng = random.Random(source.name + target)
    cuts = [rng.randrange(len(data) + 1) for _ in range(rng.randrange(1, 12))]
    for provider, chunks in (
        (target, None),
        (None, None),
        (target, list(split_at(data, cuts))),
    ):
        back = normalize_bytes(data, provider, chunks)[-1].response
        check_same(answer(source), back, target)


@pytest.mark.parametrize(("source", "target"), _cases())
def test_events_written_at_once_are_the_bytes_of_each_written_in_turn(
    source: Source, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fresh answer id (an answer that came without one) is the same on both sides.
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=7))
    events = events_of(source)
    assert events is not None
    one = StreamEncoder(target)
    each = b"".join(map(one.encode, events)) + one.close()
    rng = random.Random(source.name + target)
    cuts = sorted(rng.randrange(len(events) + 1) for _ in range(rng.randrange(1, 6)))
    other = StreamEncoder(target)
    bounds = [0, *cuts, len(events)]
    batches = [events[a:b] for a, b in itertools.pairwise(bounds)]
    assert b"".join(map(other.encode_all, batches)) + other.close() == each


@pytest.mark.parametrize("target", [*WRITERS, "events", "ai-sdk"])
def test_a_run_of_text_deltas_is_checked_and_written_as_each_one_is(target: str) -> None:
    texts = ["a", "\ud800 lone", 'é\n"q"', ""]
    events: list[Event] = [ResponseStart("r", "m", target), BlockStart(0, Text(""))]
    events += [TextDelta(0, text) for text in texts]
    one, other = StreamEncoder(target), StreamEncoder(target)
    assert other.encode_all(events) == b"".join(map(one.encode, events))
    if target == "events":
        return  # laminate's own events are written as they are, in any order
    closed = StreamEncoder(target)
    closed.encode(ResponseStart("r", "m", target))
    with pytest.raises(LaminateError, match="not open"):
        closed.encode_all([TextDelta(0, "a"), TextDelta(0, "b")])


@pytest.mark.parametrize(("source", "target"), _cases())
def test_body_round_trip(source: Source, target: str) -> None:
    """The complete body says the target's own stop reason and usage, as its stream does."""
    body = json.dumps(laminate.encode_response(answer(source), target)).encode()
    for provider in (target, None):
        check_same(answer(source), laminate.normalize(body, provider), target, "body")


@pytest.mark.parametrize("source", COMPLETE, ids=[s.name for s in COMPLETE])
def test_events_target_gives_back_equal_events(source: Source) -> None:
    events = events_of(source)
    assert events is not None
    lines = encode(events, "events").split(b"\n")[:-1]
    views: dict[int, Any] = {}
    back = [laminate.event_from_dict(json.loads(line), views) for line in lines]
    assert back == events


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(COMPLETE),
    st.sampled_from(WRITERS),
    st.lists(st.integers(min_value=0, max_value=1 << 20), max_size=20),
)
def test_round_trip_any_chunking(source: Source, target: str, cuts: list[int]) -> None:
    events = events_of(source)
    assert events is not None
    data = encode(events, target)
    whole = normalize_bytes(data, target)
    split = normalize_bytes(data, target, list(split_at(data, [c % (len(data) + 1) for c in cuts])))
    assert split == whole
    check_same(answer(source), whole[-1].response, target)


def test_stop_kinds_are_named_in_every_table() -> None:
    for target in WRITERS:
        for kind, instead in carries(target).stop_lost.items():
            assert kind is None or kind in StopReason.KINDS
            assert instead is None or instead in StopReason.KINDS


# -- the documentation -----------------------------------------------------------------------

DOCS = Path(__file__).resolve().parent.parent / "docs" / "writing-streams.md"
_COUNT_NAMES = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_read_tokens": "cache read",
    "cache_write_tokens": "cache write",
    "reasoning_tokens": "reasoning",
}


def _documented() -> dict[str, list[str]]:
    """The rows of the "what each target carries" table, by target."""
    text = DOCS.read_text("utf-8")
    table = text[text.index("| target | wire format | counts kept |") :]
    rows: dict[str, list[str]] = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("| `"):
            break
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        rows[cells[0].strip("`")] = cells
    return rows


def _stop_cell(carried: Carries) -> str:
    def named(kind: str | None, unknown: str) -> str:
        return f"`{kind}`" if kind is not None else unknown

    return ", ".join(
        f"{named(kind, 'an unknown value')} → {named(instead, 'unknown')}"
        for kind, instead in carried.stop_lost.items()
    )


def test_the_documented_table_is_the_records() -> None:
    rows = _documented()
    assert set(WRITERS) <= set(rows)
    for target in WRITERS:
        carried = carries(target)
        _, _, counts, stops, _ = rows[target]
        assert counts == ", ".join(_COUNT_NAMES[name] for name in carried.counts), target
        assert stops == _stop_cell(carried), target
