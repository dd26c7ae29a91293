"""Telling the provider of a complete body from its shape (``_apis/detect.py``): by which
fields it has, never by their order, and never by a guess between two APIs."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from laminate import Event, LaminateError, ToolInputDelta, UnknownProviderError, normalize
from laminate._apis.detect import body_provider, provider_from_body
from laminate._core.serialize import response_to_dict

from .support import RECORDING_FOLDERS, recorded_bodies, run_chunks

BODIES = recorded_bodies()


def shuffled(value: Any, rng: random.Random) -> Any:
    """``value`` with the keys of every object, at every level, in another order."""
    if isinstance(value, dict):
        items = [(key, shuffled(item, rng)) for key, item in value.items()]
        rng.shuffle(items)
        return dict(items)
    if isinstance(value, list):
        return [shuffled(item, rng) for item in value]
    return value


def outcome(body: Any, provider: str | None) -> tuple[Any, ...]:
    """What ``normalize`` makes of ``body``: the response, or the error's type and text."""
    try:
        return ("response", response_to_dict(normalize(body, provider)))
    except LaminateError as exc:
        return ("error", type(exc).__name__, exc.message)


def streamed(data: bytes) -> tuple[Any, ...]:
    """What the streaming side makes of a body handed to it, the provider not named."""
    result = run_chunks([data])
    if result.error is not None:
        # Without the place in the bytes a stream's error names (a body's is its start).
        return ("error", type(result.error).__name__, result.error.message)
    assert result.response is not None
    return ("response", response_to_dict(result.response))


def events_of(events: list[Event]) -> list[object]:
    """The events, each tool input fragment that is whole JSON as its value."""
    out: list[object] = []
    for event in events:
        if isinstance(event, ToolInputDelta):
            try:
                out.append((event.index, json.loads(event.fragment)))
                continue
            except ValueError:
                pass
        out.append(event)
    return out


def named(path: Path) -> tuple[Any, ...]:
    return outcome(path.read_bytes(), RECORDING_FOLDERS[path.parent.name])


@pytest.mark.skipif(
    not BODIES, reason="no shared recordings (../shared/real-streams*) beside this clone"
)
@pytest.mark.parametrize(
    "path", BODIES, ids=[f"{p.parent.parent.name}/{p.parent.name}/{p.name}" for p in BODIES]
)
@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_recorded_body_reads_alike_whatever_its_key_order(path: Path, seed: int) -> None:
    """Every recorded complete body, its keys shuffled at every level, read without naming
    its provider (by ``normalize`` and by the streaming side, compact and indented),
    gives what the body as recorded gives with its provider named."""
    wanted = named(path)
    body = shuffled(json.loads(path.read_bytes()), random.Random(seed))
    assert outcome(body, None) == wanted
    compact = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    assert outcome(compact, None) == wanted
    assert streamed(compact) == wanted
    assert streamed(json.dumps(body, indent=2).encode()) == wanted
    # The same events as the body as recorded, its provider named (whole arguments sent
    # as an object are written in its keys' order: compared as the values they are).
    provider = RECORDING_FOLDERS[path.parent.name]
    recorded = run_chunks([path.read_bytes()], provider)
    assert events_of(run_chunks([compact]).events) == events_of(recorded.events)


@pytest.mark.skipif(
    not BODIES, reason="no shared recordings (../shared/real-streams*) beside this clone"
)
def test_no_recorded_body_is_claimed_by_two_apis() -> None:
    for path in BODIES:
        data = json.loads(path.read_bytes())
        try:
            provider = provider_from_body(data)
        except UnknownProviderError as exc:  # pragma: no cover - the failure's message
            raise AssertionError(f"{path.name}: {exc}") from exc
        # An Anthropic model's InvokeModel body, recorded from Bedrock, is Anthropic's.
        folder = RECORDING_FOLDERS[path.parent.name]
        assert provider in (folder, None) or (folder, provider) == ("bedrock", "anthropic")


def test_a_body_two_apis_would_claim_is_an_error_not_a_guess() -> None:
    body = {"choices": [], "candidates": [], "id": "x"}
    with pytest.raises(UnknownProviderError, match=r"more than one API \(openai, gemini\)"):
        provider_from_body(body)
    with pytest.raises(UnknownProviderError, match="more than one API"):
        normalize(body)
    result = run_chunks([json.dumps(body, indent=1).encode()])
    assert isinstance(result.error, UnknownProviderError)
    assert normalize({**body, "choices": [{"message": {"content": "hi"}}]}, "openai").text() == "hi"


def test_a_body_no_api_claims_is_an_error() -> None:
    with pytest.raises(UnknownProviderError, match="keys: a, b"):
        body_provider({"b": 1, "a": 2})
