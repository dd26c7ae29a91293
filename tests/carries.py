"""What each API's writers carry of an answer: the oracle of the round trip over every writer.

An answer written as an API (its stream and its complete body) and read back by that API's
reader keeps everything but what the API has no place for. :class:`Carries` says what that
is, for each API with a writer, keyed by its provider name; ``tests/test_encode.py`` holds
every writer to it and checks that the table in ``docs/writing-streams.md`` says the same in
words. Nothing in ``src`` reads it: it states what the writers do, so that a writer that
loses more than this is a failing test.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from laminate import StopReason
from laminate._apis.anthropic.read import STOP_REASONS as ANTHROPIC_STOPS
from laminate._apis.bedrock.read import STOP_REASONS as BEDROCK_STOPS
from laminate._apis.cohere.read import STOP_REASONS as COHERE_STOPS
from laminate._apis.gemini.read import STOP_REASONS as GEMINI_STOPS
from laminate._apis.ollama.read import STOP_REASONS as OLLAMA_STOPS
from laminate._apis.openai_chat.read import STOP_REASONS as CHAT_STOPS

__all__ = ["CARRIES", "Carries"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Carries:
    """What an API's writers (its stream and its complete body) carry of an answer, as its
    own reader reads them back: what an answer keeps when written as this API."""

    counts: tuple[str, ...]
    """The :class:`~laminate.Usage` counts kept (one that was not reported may read back
    as the schema's placeholder 0)."""
    stop_reasons: Mapping[str, StopReason]
    """How its reader names a stop string: a value written as it was sent (one this API
    has no name for) reads back through this table."""
    stop_lost: Mapping[str | None, str | None] = field(default_factory=dict)
    """Stop kinds it has no value for, and the kind its reader gives instead (``None``:
    an unknown value; the key ``None``: a value no reader knew)."""
    foreign_stop: str = ""
    """The value another API's unknown stop string is written as (``""``: as it was
    sent)."""
    calls_name_tool_use: bool = False
    """Its reader says tool use when the wire says a plain end and the answer has calls."""
    tool_use_needs_calls: bool = False
    """Tool use and a plain end are one value on its wire: tool use without a call reads
    back as a plain end."""
    reasoning_needs_output: bool = False
    """Its reader adds the reasoning count to the output count, so one without an output
    count is lost."""
    response_id: bool = True
    """The response id is written."""
    model: bool = True
    """The model name is written."""
    call_ids: bool = True
    """Tool-call ids are written (else its reader makes new ones)."""
    invalid_calls: bool = True
    """A call whose arguments are not a JSON object is written in a stream."""
    invalid_calls_in_body: bool = True
    """... and in a complete body."""
    opaque_in_body: bool = True
    """Its own opaque tokens (signatures, encrypted reasoning) go back in a complete body
    too (a stream always carries them back)."""
    body_stop_kinds: frozenset[str] = frozenset()
    """Stop kinds a complete body names although a stream cannot: said by how the text is
    written, which a stream decides before the stop reason is known (so only an answer
    with text can say them)."""


CARRIES: Final[Mapping[str, Carries]] = {
    "openai": Carries(
        counts=(
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "reasoning_tokens",
        ),
        stop_reasons=CHAT_STOPS,
        stop_lost={
            "stop_sequence": "end_turn",
            "refusal": "end_turn",
            "pause_turn": "end_turn",
            "context_window_exceeded": "max_tokens",
        },
        calls_name_tool_use=True,
        opaque_in_body=False,  # `reasoning_details` are written in streams only
    ),
    "openai-responses": Carries(
        counts=("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens"),
        stop_reasons={},  # no stop string: `status` and `incomplete_details` say it
        stop_lost={
            "stop_sequence": "end_turn",
            "refusal": "end_turn",
            "pause_turn": "end_turn",
            "context_window_exceeded": "end_turn",
            None: "end_turn",
        },
        calls_name_tool_use=True,
        # A stream's text goes out as `output_text` before the stop is known; a body
        # writes the text of a refusal as a `refusal` part.
        body_stop_kinds=frozenset({"refusal"}),
    ),
    "anthropic": Carries(
        counts=("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"),
        stop_reasons=ANTHROPIC_STOPS,
        stop_lost={"content_filter": "refusal"},
        invalid_calls_in_body=False,  # a body's `input` must be an object
    ),
    "ollama": Carries(
        counts=("input_tokens", "output_tokens", "cache_read_tokens"),
        stop_reasons=OLLAMA_STOPS,
        stop_lost={
            "stop_sequence": "end_turn",
            "context_window_exceeded": "max_tokens",
            "content_filter": None,
            "refusal": None,
            "pause_turn": None,
        },
        calls_name_tool_use=True,
        tool_use_needs_calls=True,  # "stop" either way
        response_id=False,
        call_ids=False,
        invalid_calls=False,  # `arguments` must be an object
        invalid_calls_in_body=False,
    ),
    "gemini": Carries(
        counts=("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens"),
        stop_reasons=GEMINI_STOPS,
        stop_lost={
            "stop_sequence": "end_turn",
            "pause_turn": "end_turn",
            "context_window_exceeded": "max_tokens",
            "refusal": "content_filter",
        },
        foreign_stop="OTHER",
        calls_name_tool_use=True,
        tool_use_needs_calls=True,  # "STOP" either way
        reasoning_needs_output=True,
        invalid_calls=False,  # `args` must be an object
        invalid_calls_in_body=False,
    ),
    "cohere": Carries(
        counts=("input_tokens", "output_tokens", "cache_read_tokens"),
        stop_reasons=COHERE_STOPS,
        stop_lost={
            "pause_turn": "end_turn",
            "context_window_exceeded": "max_tokens",
            "content_filter": None,
            "refusal": None,
        },
        model=False,
    ),
    "bedrock": Carries(
        counts=("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"),
        stop_reasons=BEDROCK_STOPS,
        stop_lost={"pause_turn": "end_turn", "refusal": "content_filter"},
        response_id=False,  # ConverseStream names neither
        model=False,
        invalid_calls_in_body=False,  # a body's `input` must be an object
    ),
}
