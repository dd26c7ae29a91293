"""Writes the binary fixtures of ``fixtures/bedrock/`` and ``fixtures/anthropic-bedrock/``,
and the Bedrock recordings of ``laminate demo`` (``src/laminate/_cli/demo_streams/bedrock/``).

AWS event stream bodies are binary, so they are not written by hand: the events are, here,
and :func:`laminate._framing.eventstream.encode_message` frames them (lengths and CRCs).
Run ``python -m tests.make_bedrock_fixtures`` from the repository root after changing an
event below; the ``.expected.json`` and ``.body.json`` files beside the output are written
by hand and are not touched. Every payload carries a ``p`` padding key, as Bedrock's do.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, Final

from laminate._framing.eventstream import encode_message

ROOT: Final = Path(__file__).resolve().parent.parent
FIXTURES: Final = ROOT / "fixtures"
DEMO_STREAMS: Final = ROOT / "src" / "laminate" / "_cli" / "demo_streams"

Event = tuple[str, dict[str, Any]]


def _pad(n: int) -> str:
    # Bedrock pads with a prefix of this alphabet, of a random length.
    return "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[:n]


def event(name: str, payload: dict[str, Any], pad: int = 7) -> bytes:
    """One ``event`` message: ``:event-type`` ``name``, the payload as compact JSON."""
    body = json.dumps({**payload, "p": _pad(pad)}, ensure_ascii=False, separators=(",", ":"))
    headers = {":event-type": name, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, body.encode())


def exception(name: str, message: str) -> bytes:
    """One ``exception`` message, as Bedrock sends a failure in the middle of a stream."""
    headers = {
        ":exception-type": name,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_message(headers, json.dumps({"message": message}).encode())


def converse(events: list[Event]) -> bytes:
    return b"".join(
        event(name, payload, 3 + 5 * (n % 9)) for n, (name, payload) in enumerate(events)
    )


def text(index: int, value: str) -> Event:
    return ("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": value}})


def tool_start(index: int, tool_id: str, name: str) -> Event:
    start = {"toolUse": {"name": name, "toolUseId": tool_id}}
    return ("contentBlockStart", {"contentBlockIndex": index, "start": start})


def tool_input(index: int, fragment: str) -> Event:
    return (
        "contentBlockDelta",
        {"contentBlockIndex": index, "delta": {"toolUse": {"input": fragment}}},
    )


def reasoning(index: int, **part: str) -> Event:
    return ("contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": part}})


def stop(index: int) -> Event:
    return ("contentBlockStop", {"contentBlockIndex": index})


START: Final[Event] = ("messageStart", {"role": "assistant"})


def message_stop(reason: str) -> Event:
    return ("messageStop", {"stopReason": reason})


def metadata(**usage: int) -> Event:
    total = usage.get("inputTokens", 0) + usage.get("outputTokens", 0)
    return ("metadata", {"metrics": {"latencyMs": 412}, "usage": {**usage, "totalTokens": total}})


BEDROCK: Final[dict[str, bytes]] = {
    # Text blocks have no contentBlockStart; usage (with the cache counts) comes after
    # messageStop. A raw U+2028 in the text is just a character here.
    "text": converse(
        [
            START,
            text(0, "Lisbon is the capital"),
            text(0, " of Portugal.\u2028It sits on the Tagus."),
            stop(0),
            message_stop("end_turn"),
            metadata(
                inputTokens=25,
                outputTokens=14,
                cacheReadInputTokens=1024,
                cacheWriteInputTokens=96,
            ),
        ]
    ),
    # A tool without parameters: its only input fragment is "", which means {}.
    "tool-empty-input": converse(
        [
            START,
            text(0, "Let me look at the clock."),
            stop(0),
            tool_start(1, "tooluse_Q2xvY2tOb3dfMDAx", "current_time"),
            tool_input(1, ""),
            stop(1),
            message_stop("tool_use"),
            metadata(inputTokens=180, outputTokens=31),
        ]
    ),
    # Two calls one after the other, each with its own block index; arguments in pieces.
    "parallel-tools": converse(
        [
            START,
            text(0, "Checking both cities."),
            stop(0),
            tool_start(1, "tooluse_V2VhdGhlck9zbG8x", "get_weather"),
            tool_input(1, ""),
            tool_input(1, '{"city": "Os'),
            tool_input(1, 'lo", "units": "celsius"}'),
            stop(1),
            tool_start(2, "tooluse_V2VhdGhlckxpbWEy", "get_weather"),
            tool_input(2, '{"city": "Lima"'),
            tool_input(2, ', "units": "celsius"}'),
            stop(2),
            message_stop("tool_use"),
            metadata(inputTokens=402, outputTokens=96),
        ]
    ),
    # Claude's extended thinking through Converse: reasoning text deltas, then the
    # signature as a delta of its own, then the answer in block 1.
    "reasoning": converse(
        [
            START,
            reasoning(0, text="Seven times eight"),
            reasoning(0, text=" is fifty-six; add one."),
            reasoning(0, signature="RXhhbXBsZVNpZ25hdHVyZQ+/=="),
            stop(0),
            text(1, "7 \u00d7 8 + 1 = 57."),
            stop(1),
            message_stop("end_turn"),
            metadata(inputTokens=44, outputTokens=120),
        ]
    ),
    # Redacted thinking: opaque data only, kept as the signature of a redacted block.
    "redacted-reasoning": converse(
        [
            START,
            reasoning(0, redactedContent="UmVkYWN0ZWRUaGlua2luZ0RhdGE="),
            stop(0),
            text(1, "Here is my answer."),
            stop(1),
            message_stop("end_turn"),
            metadata(inputTokens=60, outputTokens=88),
        ]
    ),
    # The token limit cuts the call short: its arguments are kept, unfinished.
    "max-tokens-cut-call": converse(
        [
            START,
            tool_start(0, "tooluse_U2F2ZU5vdGVfMDAx", "save_note"),
            tool_input(0, '{"title": "Groceries", "body": "eggs, '),
            tool_input(0, "flour, "),
            message_stop("max_tokens"),
            metadata(inputTokens=77, outputTokens=16),
        ]
    ),
    # A guardrail masked part of the answer and stopped it.
    "guardrail-intervened": converse(
        [
            START,
            text(0, "Your account number is {ACCOUNT_NUMBER}."),
            stop(0),
            message_stop("guardrail_intervened"),
            (
                "metadata",
                {
                    "metrics": {"latencyMs": 903},
                    "trace": {"guardrail": {"actionReason": "Guardrail masked."}},
                    "usage": {"inputTokens": 21, "outputTokens": 12, "totalTokens": 33},
                },
            ),
        ]
    ),
    # No metadata at all: the stream ends after messageStop, which is complete.
    "stop-without-metadata": converse(
        [START, text(0, "Done."), stop(0), message_stop("stop_sequence")]
    ),
    # A stop reason no table knows: kept as unknown.
    "unknown-stop-reason": converse(
        [
            START,
            text(0, "Partial"),
            stop(0),
            message_stop("quota_paused"),
            metadata(inputTokens=9, outputTokens=2),
        ]
    ),
    # Throttled in the middle of the answer: an exception message, no messageStop.
    "throttled-mid-stream": converse([START, text(0, "The first half of the"), text(0, " answer")])
    + exception("throttlingException", "Too many requests, please wait before trying again."),
}
# The bytes end inside the last message (after 9 of its bytes).
_CUT = converse([START, text(0, "Cut off"), text(0, " here")])
BEDROCK["truncated-inside-frame"] = _CUT + event("messageStop", {"stopReason": "end_turn"})[:9]


def chunk(payload: dict[str, Any], pad: int = 11) -> bytes:
    """An InvokeModelWithResponseStream ``chunk``: one Anthropic event, base64 in ``bytes``."""
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return event("chunk", {"bytes": base64.b64encode(raw).decode("ascii")}, pad)


def _invoke(events: list[dict[str, Any]]) -> bytes:
    return b"".join(chunk(payload, 2 + 4 * (n % 11)) for n, payload in enumerate(events))


_MESSAGE: Final[dict[str, Any]] = {
    "id": "msg_bdrk_01BedrockFixture0001",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-20250514",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {"input_tokens": 38, "output_tokens": 1},
}
_METRICS: Final[dict[str, Any]] = {
    "inputTokenCount": 38,
    "outputTokenCount": 12,
    "invocationLatency": 811,
    "firstByteLatency": 302,
}


def _text_delta(index: int, value: str) -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "text_delta", "text": value},
    }


ANTHROPIC_BEDROCK: Final[dict[str, bytes]] = {
    "text": _invoke(
        [
            {"type": "message_start", "message": _MESSAGE},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            _text_delta(0, "Bonjour"),
            _text_delta(0, ", tout le monde !"),
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 12},
            },
            {"type": "message_stop", "amazon-bedrock-invocationMetrics": _METRICS},
        ]
    ),
    "tool-use": _invoke(
        [
            {
                "type": "message_start",
                "message": {**_MESSAGE, "id": "msg_bdrk_01BedrockFixture0002"},
            },
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            _text_delta(0, "Converting now."),
            {"type": "content_block_stop", "index": 0},
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_bdrk_01ConvertFixture01",
                    "name": "convert",
                    "input": {},
                },
            },
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": '{"amount": 12.5, '},
            },
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {
                    "type": "input_json_delta",
                    "partial_json": '"from": "EUR", "to": "JPY"}',
                },
            },
            {"type": "content_block_stop", "index": 1},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 41},
            },
            {
                "type": "message_stop",
                "amazon-bedrock-invocationMetrics": {**_METRICS, "outputTokenCount": 41},
            },
        ]
    ),
    # Overloaded after the first words: the exception message ends the stream.
    "throttled-mid-stream": _invoke(
        [
            {
                "type": "message_start",
                "message": {**_MESSAGE, "id": "msg_bdrk_01BedrockFixture0003"},
            },
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            _text_delta(0, "Once upon"),
        ]
    )
    + exception("modelStreamErrorException", "The model stream was interrupted."),
}


# -- the demo's recordings: the two turns of `laminate demo`'s tool loop ------------------

_SLUGIFY: Final = '''"""URL slugs from titles."""

import re
import unicodedata


def slugify(title: str) -> str:
    """Lowercase ASCII words joined by hyphens.

    >>> slugify("Crème brûlée: 10 recipes!")
    'creme-brulee-10-recipes'
    """
    folded = unicodedata.normalize("NFKD", title)
    ascii_only = folded.encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_only.lower()).strip("-")
'''


def _arguments(index: int, arguments: dict[str, str], size: int) -> list[Event]:
    """A call's arguments as JSON text, streamed in ``size``-character fragments."""
    whole = json.dumps(arguments, ensure_ascii=False)
    return [tool_input(index, whole[at : at + size]) for at in range(0, len(whole), size)]


DEMO: Final[dict[str, bytes]] = {
    # Claude through ConverseStream: thinking with its signature, a sentence, two calls.
    "1-tool-calls": converse(
        [
            START,
            reasoning(0, text="A slug helper, saved to disk, then checked."),
            reasoning(0, text=" NFKD first so accents fold away, then drop"),
            reasoning(0, text=" what is not ASCII, lowercase, and join the"),
            reasoning(0, text=" remaining words with single hyphens. A doctest"),
            reasoning(0, text=" shows the behaviour; running it proves it."),
            reasoning(0, signature="RGVtb1NpZ25hdHVyZUZvclRoZUJlZHJvY2tUdXJuMDE="),
            stop(0),
            text(1, "I'll write `slugify.py`"),
            text(1, " with a small, dependency-free"),
            text(1, " helper and run its doctest."),
            stop(1),
            tool_start(2, "tooluse_V3JpdGVGaWxlRGVtbzAx", "write_file"),
            *_arguments(2, {"path": "slugify.py", "content": _SLUGIFY}, 29),
            stop(2),
            tool_start(3, "tooluse_UnVuQ29tbWFuZERlbW8w", "run_command"),
            *_arguments(3, {"command": "python -m doctest -v slugify.py"}, 23),
            stop(3),
            message_stop("tool_use"),
            metadata(inputTokens=1204, outputTokens=297),
        ]
    ),
    "2-answer": converse(
        [
            START,
            text(0, "Done: `slugify.py` is"),
            text(0, " written and its doctest"),
            text(0, ' passes, so `slugify("Crème brûlée: 10'),
            text(0, " recipes!\")` returns `'creme-brulee-10-recipes'`."),
            stop(0),
            message_stop("end_turn"),
            metadata(inputTokens=1533, outputTokens=46),
        ]
    ),
}


def main() -> None:
    for directory, streams in (
        (FIXTURES / "bedrock", BEDROCK),
        (FIXTURES / "anthropic-bedrock", ANTHROPIC_BEDROCK),
        (DEMO_STREAMS / "bedrock", DEMO),
    ):
        directory.mkdir(exist_ok=True)
        for name, data in streams.items():
            (directory / f"{name}.eventstream").write_bytes(data)
            where = (directory / name).relative_to(ROOT)
            print(f"wrote {where}.eventstream ({len(data)} bytes)")


if __name__ == "__main__":
    main()
