"""Ollama's native ``/api/chat`` streams (``provider="ollama"``): the stop-reason table.
Whole streams live in fixtures/ollama and fixtures/ollama-drift."""

from __future__ import annotations

import pytest

from .builders import done_response, ollama
from .support import run_chunks


@pytest.mark.parametrize(
    ("raw", "tool_call", "kind"),
    [
        ("stop", False, "end_turn"),
        ("stop", True, "tool_use"),
        ("length", False, "max_tokens"),
        ("load", False, None),
        ("unload", False, None),
    ],
)
def test_ollama_stop_reason_table(raw: str, tool_call: bool, kind: str | None) -> None:
    response = done_response(run_chunks([ollama(raw, tool_call=tool_call)], "ollama"))
    assert response.stop_reason.kind == kind
    assert response.stop_reason.raw == raw
