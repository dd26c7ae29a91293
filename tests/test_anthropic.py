"""Anthropic Messages streams (``provider="anthropic"``): the stop-reason table and a
``[DONE]`` marker that some gateways add. Whole streams live in fixtures/anthropic and
fixtures/anthropic-drift."""

from __future__ import annotations

import pytest

from laminate import (
    IncompleteStreamError,
    StopReason,
)

from .builders import DONE, anthropic, done_response
from .support import run_chunks


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence"),
        ("pause_turn", "pause_turn"),
        ("refusal", "refusal"),
        ("model_context_window_exceeded", "context_window_exceeded"),
        ("compaction", None),
    ],
)
def test_anthropic_stop_reason_table(raw: str, kind: str | None) -> None:
    response = done_response(run_chunks([anthropic(raw)], "anthropic"))
    assert response.stop_reason.kind == kind
    assert response.stop_reason.raw == raw


def test_anthropic_done_marker_before_the_stop_reason_is_incomplete() -> None:
    cut = anthropic("end_turn").split(b"event: message_delta")[0]
    outcome = run_chunks([cut + DONE], "anthropic")
    assert isinstance(outcome.error, IncompleteStreamError)
    assert outcome.error.partial is not None
    assert outcome.error.partial.text() == "x"


def test_anthropic_done_marker_after_the_stop_reason_ends_the_answer() -> None:
    before_stop = anthropic("end_turn").split(b"event: message_stop")[0]
    response = done_response(run_chunks([before_stop + DONE], "anthropic"))
    assert response.stop_reason == StopReason.END_TURN
